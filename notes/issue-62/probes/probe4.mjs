import http from "node:http";
import { HttpAgent } from "@ag-ui/client";
const seen = [];
let run = 0;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    run += 1;
    const input = JSON.parse(body);
    seen.push({ state: input.state, ids: input.messages.map((m) => m.id) });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (e) => res.write(`data: ${JSON.stringify(e)}\n\n`);
    send({ type: "RUN_STARTED", threadId: input.threadId, runId: input.runId });
    if (run === 1) {
      send({ type: "STATE_SNAPSHOT", snapshot: { count: 1 } });
      send({ type: "STATE_DELTA", delta: [{ op: "add", path: "/x", value: 1 }, { op: "test", path: "/count", value: 99 }] });
      send({ type: "STATE_DELTA", delta: [{ op: "wireprobe", path: "/y" }, { op: "add", path: "/z", value: 3 }] });
      send({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
      send({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "one", extraField: true });
      send({ type: "TEXT_MESSAGE_END", messageId: "m1" });
      send({ type: "RUN_ERROR", message: "scripted failure" });
    } else {
      send({ type: "RUN_FINISHED", threadId: input.threadId, runId: input.runId });
    }
    res.end();
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const agent = new HttpAgent({ url: `http://127.0.0.1:${server.address().port}/`, initialMessages: [{ id: "u1", role: "user", content: "hi" }] });
for (const n of [1, 2]) {
  try { await agent.runAgent({}); } catch (e) { console.log(`run ${n} error:`, e.message); }
}
console.log(JSON.stringify(seen));
server.close();
