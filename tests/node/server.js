// A minimal HUMA-style server on Node's socket.io, for interoperability tests. It prints
// "listening PORT" once ready, pings every 200 ms, rejects events without a known type on
// the 'error' channel, and answers a triggering context-update carrying a tool-call directive.
const { Server } = require("socket.io");
const { randomUUID } = require("crypto");

const io = new Server({ pingInterval: 200, pingTimeout: 200, transports: ["websocket"] });
const TYPES = ["context-update", "tool-result", "addon-tool-event"];

io.on("connection", (socket) => {
  socket.emit("event", { type: "hello", auth: socket.handshake.auth });
  socket.on("message", (event) => {
    if (!event || typeof event !== "object" || !TYPES.includes(event.type)) {
      socket.emit("error", { type: "error", message: "unknown event type", code: "INVALID_EVENT" });
      return;
    }
    const directive = event.context && event.context.wireprobe;
    if (event.type === "context-update" && event.triggering === true && directive && directive.do === "tool-call") {
      socket.emit("event", { type: "tool-call", toolCallId: randomUUID(), toolName: directive.tool, arguments: directive.arguments || {} });
    }
  });
});

const httpServer = require("http").createServer();
io.attach(httpServer);
httpServer.listen(0, "127.0.0.1", () => {
  console.log(`listening ${httpServer.address().port}`);
});
// Never outlive the test that started us.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
