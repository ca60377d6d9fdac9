// A minimal Nuum host on Node's child_process and readline, written from the spec's
// §Transport and §Input Messages (003_d7769e1c0369e72c.txt): it starts the agent command it is
// given (`{agent}`) through a shell, waits for system/init, then sends a user message, and
// another after each result. For
// `wireprobe run nuum --client --exec "node tests/node/nuum-host.js {agent}"`.
const { spawn } = require("child_process");
const readline = require("readline");

const command = process.argv.slice(2).join(" ") || process.env.WIREPROBE_AGENT;
const agent = spawn(command, { shell: true, stdio: ["pipe", "pipe", "inherit"] });
let sent = 0;

function send(message) {
  agent.stdin.write(JSON.stringify(message) + "\n");
}

function next() {
  sent += 1;
  send({ type: "user", message: { role: "user", content: `Message ${sent} from the Node host` } });
}

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
