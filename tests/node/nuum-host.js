// A minimal Nuum host on Node's child_process and readline, written from the spec's
// §Transport and §Input Messages (003_d7769e1c0369e72c.txt): it starts the agent command it is
// given (`{agent}`) through a shell, waits for system/init, then sends a user message, and
// another after each result. For
// `wireprobe run nuum --client --exec "node tests/node/nuum-host.js {agent}"`.
//
// `--writes=HOW` (anywhere among the arguments) plants one bug in how it writes its lines:
//   two-on-a-line  a control/status and the user message as two JSON objects on one line
//   pretty         each message pretty-printed over several lines
//   dict           each message as a Python dict literal, not JSON
//   latin1         each message with a Latin-1 "é" in its text (not UTF-8)
//   early          a control/status before the agent's init, then as usual
const { spawn } = require("child_process");
const readline = require("readline");

const args = process.argv.slice(2);
const writes = (args.find((a) => a.startsWith("--writes=")) || "").slice("--writes=".length);
const command = args.filter((a) => !a.startsWith("--writes=")).join(" ") || process.env.WIREPROBE_AGENT;
// Writing early, the agent starts only once its first line is in its stdin: the shell reads a
// line of its own first (a shell's `read` takes no byte past its line), so the status line is
// written before the agent exists, however late this process is scheduled after the spawn.
const started = writes === "early" ? `read -r _go; exec ${command}` : command;
const agent = spawn(started, { shell: true, stdio: ["pipe", "pipe", "inherit"] });
let sent = 0;

function send(message) {
  const text = JSON.stringify(message);
  switch (writes) {
    case "two-on-a-line":
      agent.stdin.write(JSON.stringify({ type: "control", action: "status" }) + text + "\n");
      break;
    case "pretty":
      agent.stdin.write(JSON.stringify(message, null, 2) + "\n");
      break;
    case "dict":
      agent.stdin.write(text.replace(/"/g, "'").replace(/:/g, ": ") + "\n");
      break;
    case "latin1":
      agent.stdin.write(Buffer.from(text.replace("Message", "Messag\u00e9") + "\n", "latin1"));
      break;
    default:
      agent.stdin.write(text + "\n");
  }
}

function next() {
  sent += 1;
  send({ type: "user", message: { role: "user", content: `Message ${sent} from the Node host` } });
}

if (writes === "early") agent.stdin.write("go\n" + JSON.stringify({ type: "control", action: "status" }) + "\n");

readline.createInterface({ input: agent.stdout }).on("line", (line) => {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    return;
  }
  if (event.type === "system" && event.subtype === "init" && sent === 0) next();
  else if (event.type === "result" && sent < 50) next();
});

agent.on("exit", () => process.exit(0));
