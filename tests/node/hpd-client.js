// A minimal HPD UI client on the `eventsource` package (a WHATWG EventSource: it reconnects
// on its own, resuming with Last-Event-ID) and Node's fetch, written from the spec's UI
// Rendering Guidance (004_194452bd36a9fc7f.txt): render request events and answer with the
// matching response event through the hosted /responses route. For
// `wireprobe run hpd --client --exec "node tests/node/hpd-client.js {url}"`.
//
// It approves permissions, picks a clarification's first option and approves continuations;
// events it does not know and data that is not JSON are passed over.
//
// `--bug=HOW` plants one bug:
//   no-version   its envelopes carry no version
//   lower-type   its envelopes' types are in lower case
//   user-input   it also posts a user input of type USER_INPUT (no such type) to /inputs
// With `--ws`, `{url}` is the hosted WebSocket: events come and envelopes go as text frames,
// and the close status the socket ends with is written to stderr.
const { EventSource } = require("eventsource");
const WebSocket = require("ws");

const bug = (process.argv.find((a) => a.startsWith("--bug=")) || "").slice("--bug=".length);
const overWs = process.argv.includes("--ws");
const base = (process.argv[2] || process.env.WIREPROBE_URL).replace(/\/$/, "");
const socket = overWs ? new WebSocket(base) : null;
const source = overWs ? socket : new EventSource(`${base}/events/live`);
const opened = overWs ? new Promise((resolve) => socket.on("open", resolve)) : Promise.resolve();

function post(route, event) {
  const envelope = bug === "no-version" ? { ...event } : { version: "1.0", ...event };
  if (bug === "lower-type") envelope.type = envelope.type.toLowerCase();
  if (overWs) {
    opened.then(() => socket.send(JSON.stringify(envelope)));
    return;
  }
  fetch(`${base}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(envelope),
  }).catch(() => {});
}

function respond(event) {
  post("/responses", event);
}

if (overWs) {
  socket.on("close", (code) => {
    console.error(`closed ${code}`);
    process.exit(0);
  });
}

if (bug === "user-input") post("/inputs", { type: "USER_INPUT", text: "Hello from the Node client" });

source.onmessage = (message) => {
  let event;
  try {
    event = JSON.parse(message.data);
  } catch {
    return;
  }
  if (!event || typeof event !== "object") return;
  switch (event.type) {
    case "PERMISSION_REQUEST":
      respond({ type: "PERMISSION_RESPONSE", permissionId: event.permissionId, sourceName: event.sourceName, approved: true });
      break;
    case "CLARIFICATION_REQUEST":
      respond({
        type: "CLARIFICATION_RESPONSE",
        requestId: event.requestId,
        sourceName: event.sourceName,
        question: event.question,
        answer: (event.options && event.options[0]) || "yes",
      });
      break;
    case "CONTINUATION_REQUEST":
      respond({ type: "CONTINUATION_RESPONSE", continuationId: event.continuationId, sourceName: event.sourceName, approved: true, extensionAmount: 5 });
      break;
    default:
      break;
  }
};

// A stream that fails is retried by EventSource itself; nothing to do here.
source.onerror = () => {};
