// A minimal HUMA client on Node's socket.io-client, written from the spec's "Client
// Responsibility" paragraphs (000_9be7860959b3b922.txt), for `wireprobe run huma --client
// --exec "node tests/node/huma-client.js {url}"`. socket.io-client opens with HTTP
// long-polling and upgrades to WebSocket, as real clients do by default.
//
// Tools: lookup_movie answers at once; slow_search runs until cancelled. Any other name is
// answered with a failure, as the spec asks.
const { io } = require("socket.io-client");

const url = process.argv[2] || process.env.WIREPROBE_URL;
const socket = io(url, { reconnection: false });
const running = new Map();

function emit(event) {
  socket.emit("message", event);
}

function result(call, outcome, extra) {
  return { type: "tool-result", triggering: outcome !== "canceled", toolCallId: call.toolCallId, toolName: call.toolName, outcome, ...extra };
}

socket.on("event", (event) => {
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
socket.on("error", (error) => console.error("server error:", JSON.stringify(error)));
socket.on("connect_error", (error) => {
  console.error("cannot connect:", error.message);
  process.exit(2);
});
socket.on("disconnect", () => process.exit(0));
