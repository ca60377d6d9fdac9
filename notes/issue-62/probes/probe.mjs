import http from "node:http";
import { HttpAgent } from "@ag-ui/client";

const seen = [];
let run = 0;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    run += 1;
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(body) });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const input = JSON.parse(body);
    const send = (e) => res.write(`data: ${JSON.stringify(e)}\n\n`);
    send({ type: "RUN_STARTED", threadId: input.threadId, runId: input.runId });
    if (run === 1) {
      send({ type: "STATE_SNAPSHOT", snapshot: { count: 1, items: ["a"] } });
      send({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/count", value: 2 }] });
      send({ type: "WIREPROBE_UNKNOWN", x: 1 });
      send({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
      send({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Let me check." });
      send({ type: "TEXT_MESSAGE_END", messageId: "m1" });
      send({ type: "TOOL_CALL_START", toolCallId: "call-1", toolCallName: "get_weather", parentMessageId: "m1" });
      send({ type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: '{"city":' });
      send({ type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: '"Paris"}' });
      send({ type: "TOOL_CALL_END", toolCallId: "call-1" });
    } else {
      send({ type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant" });
      send({ type: "TEXT_MESSAGE_CONTENT", messageId: "m2", delta: "Sunny." });
      send({ type: "TEXT_MESSAGE_END", messageId: "m2" });
    }
    send({ type: "RUN_FINISHED", threadId: input.threadId, runId: input.runId });
    res.end();
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/agent`;
const agent = new HttpAgent({ url, initialMessages: [{ id: "u1", role: "user", content: "Weather in Paris?" }] });
const tools = [{ name: "get_weather", description: "The weather of a city", parameters: { type: "object", properties: { city: { type: "string" } } } }];
try {
  await agent.runAgent({ tools, context: [] });
} catch (e) { console.log("run 1 error:", e.message); }
const pending = agent.messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id));
for (const id of pending) agent.addMessage({ id: `tool-${id}`, role: "tool", toolCallId: id, content: "sunny" });
try {
  await agent.runAgent({ tools, context: [] });
} catch (e) { console.log("run 2 error:", e.message); }
console.log(JSON.stringify(seen, null, 1));
server.close();
