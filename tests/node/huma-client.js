// A minimal HUMA client on Node's socket.io-client, written from the spec's "Client
// Responsibility" paragraphs (000_9be7860959b3b922.txt), for `wireprobe run huma --client
// --exec "node tests/node/huma-client.js {url}"`. socket.io-client opens with HTTP
// long-polling and upgrades to WebSocket, as real clients do by default.
//
// An optional second argument, a comma-separated list of milliseconds, delays each answer by
// the next delay of the list in turn (starting at a place the process id picks): answers then
// leave before, during and after the transport's upgrade from polling to WebSocket.
//
// Tools: lookup_movie answers at once; slow_search runs until cancelled. Any other name is
// answered with a failure, as the spec asks.
const { io, Manager } = require("socket.io-client");

const url = process.argv[2] || process.env.WIREPROBE_URL;
// HUMA_HELLO_DELAY_MS: open the Engine.IO session at once but say the namespace's CONNECT
// that long after, as a client busy starting does.
const helloDelay = Number(process.env.HUMA_HELLO_DELAY_MS || 0);
let socket;
const running = new Map();
const delays = (process.argv[3] || "0").split(",").map(Number);
let nextDelay = process.pid % delays.length;

function emit(event) {
  const delay = delays[nextDelay++ % delays.length];
  if (delay > 0) setTimeout(() => socket.emit("message", event), delay);
  else socket.emit("message", event);
}

function result(call, outcome, extra) {
  return { type: "tool-result", triggering: outcome !== "canceled", toolCallId: call.toolCallId, toolName: call.toolName, outcome, ...extra };
}

// Answers what the server sends on `s`, the namespace's socket.
function serve(s) {
  socket = s;
  s.on("event", (event) => {
    if (!event || typeof event !== "object") return;
    switch (event.type) {
      case "tool-call":
        if (event.toolName === "lookup_movie") {
          emit(result(event, "success", { result: { title: "Inception", year: 2010 } }));
        } else if (event.toolName === "slow_search") {
          running.set(event.toolCallId, setTimeout(() => {
            running.delete(event.toolCallId);
            emit(result(event, "success", { result: "done" }));
          }, 30000));
        } else {
          emit(result(event, "failure", { error: `Unknown tool: ${event.toolName}` }));
        }
        break;
      case "cancel-tool-call": {
        const timer = running.get(event.toolCallId);
        if (timer) {
          clearTimeout(timer);
          running.delete(event.toolCallId);
          emit(result(event, "canceled"));
        }
        break;
      }
      case "messaging":
        if (event.event === "message_sent") {
          emit({ type: "addon-tool-event", toolCallId: event.toolCallId, data: { messageIndex: event.messageIndex, success: true, context: {} } });
        }
        break;
    }
  });
  s.on("error", (error) => console.error("server error:", JSON.stringify(error)));
  s.on("connect_error", (error) => {
    console.error("cannot connect:", error.message);
    process.exit(2);
  });
  s.on("disconnect", () => process.exit(0));
}

if (helloDelay > 0) {
  const manager = new Manager(url, { reconnection: false });
  manager.on("open", () => setTimeout(() => serve(manager.socket("/")), helloDelay));
} else {
  serve(io(url, { reconnection: false }));
}
