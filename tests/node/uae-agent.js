// A minimal UAE agent calling its API Executor, on Node's child_process and readline, written
// from the spec's §Agent → API Executor and §API Executor → Agent (002_32720a159e3ec1f9.txt),
// bound to one envelope per line as wireprobe binds UAE over stdio. It starts the executor
// command it is given (`{agent}`) through a shell, calls a tool at once, and again after each
// result naming a call of its own. For
// `wireprobe run uae --client --transport stdio --exec "node tests/node/uae-agent.js {agent}"`.
const { spawn } = require("child_process");
const { randomUUID } = require("crypto");
const readline = require("readline");

const command = process.argv.slice(2).join(" ") || process.env.WIREPROBE_AGENT;
const executor = spawn(command, { shell: true, stdio: ["pipe", "pipe", "inherit"] });
const session = `sess_node_${randomUUID()}`;
const open = new Set();
let calls = 0;

function call() {
  if (calls >= 50) return;
  calls += 1;
  const trace = `tr_${randomUUID().replace(/-/g, "")}`;
  open.add(trace);
  const event = {
    type: "tool.call",
    id: `evt_${randomUUID().replace(/-/g, "")}`,
    ts: new Date().toISOString(),
    trace_id: trace,
    session_id: session,
    payload: { tool: "lookup_weight", args: { day: "2026-01-08", n: calls } },
  };
  executor.stdin.write(JSON.stringify(event) + "\n");
}

readline.createInterface({ input: executor.stdout }).on("line", (line) => {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    return;
  }
  if (event.type === "tool.result" && open.delete(event.trace_id)) call();
});

executor.on("exit", () => process.exit(0));
call();
