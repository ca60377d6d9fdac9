// A minimal HPD UI client on the `eventsource` package (a WHATWG EventSource: it reconnects
// on its own, resuming with Last-Event-ID) and Node's fetch, written from the spec's UI
// Rendering Guidance (004_194452bd36a9fc7f.txt): render request events and answer with the
// matching response event through the hosted /responses route. For
// `wireprobe run hpd --client --exec "node tests/node/hpd-client.js {url}"`.
//
// It approves permissions, picks a clarification's first option and approves continuations;
// events it does not know and data that is not JSON are passed over.
const { EventSource } = require("eventsource");

const base = (process.argv[2] || process.env.WIREPROBE_URL).replace(/\/$/, "");
const source = new EventSource(`${base}/events/live`);

function respond(event) {
  fetch(`${base}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ version: "1.0", ...event }),
  }).catch(() => {});
}

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
