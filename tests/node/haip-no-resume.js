// A minimal HAIP client on the `ws` package, written from the spec's §HAIP Handshake
// Requirements and §Event Catalogue (001_1704fd641f081645.txt): its HAI, a PONG for each PING,
// numbered from "1". A dropped connection ends it: it never resumes, which the spec leaves to
// a client ("reuse a still-valid token or start a new session"). For
// `wireprobe run haip --client --exec "node tests/node/haip-no-resume.js {url}"`.
const WebSocket = require("ws");
const { randomUUID } = require("crypto");

const ws = new WebSocket(process.argv[2] || process.env.WIREPROBE_URL);
const session = randomUUID();
let seq = 0;

function send(type, payload) {
  seq += 1;
  const envelope = { id: randomUUID(), session, seq: String(seq), ts: String(Date.now()), channel: "SYSTEM", type, payload };
  ws.send(JSON.stringify(envelope));
}

ws.on("open", () =>
  send("HAI", {
    haip_version: "1.1.2",
    accept_major: [1],
    accept_events: ["HAI", "PING", "PONG", "ERROR", "TEXT_MESSAGE_START", "TEXT_MESSAGE_PART", "TEXT_MESSAGE_END"],
  }),
);
ws.on("message", (data) => {
  let event;
  try {
    event = JSON.parse(data.toString());
  } catch {
    return;
  }
  if (event.type === "PING") send("PONG", event.payload);
});
ws.on("close", () => process.exit(0));
ws.on("error", () => process.exit(0));
