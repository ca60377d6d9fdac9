// An AG-UI frontend's test mode on @ag-ui/client 1.0.0's HttpAgent, as a user would write it
// (README: "An AG-UI client"): one run with a user message and one frontend tool; when a run
// finishes with a call to that tool unanswered, answer it and run again on the same thread.
// wireprobe serves the agent at the URL given (`run agui --client --exec "node
// agui-client.mjs {url}"`). Only the public API is used; the agent mints its own ids.
import { HttpAgent } from "@ag-ui/client";

const url = process.argv[2];
const TOOL = "confirm";
const tools = [
  {
    name: TOOL,
    description: "Asks the user to confirm; answers whether they did.",
    parameters: { type: "object", properties: {} },
  },
];
const agent = new HttpAgent({
  url,
  initialMessages: [{ id: crypto.randomUUID(), role: "user", content: "Please confirm, using your tool." }],
});

// An agent that calls the tool forever is left; a fuzzed session (a run per probe) fits.
for (let run = 0; run < 256; run++) {
  try {
    await agent.runAgent({ tools });
  } catch (e) {
    // A run that failed finished nothing: the test mode stops.
    console.error(`run ${run + 1} failed: ${e.message}`);
    break;
  }
  const answered = new Set(agent.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  const pending = agent.messages
    .flatMap((m) => m.toolCalls ?? [])
    .filter((c) => c.function?.name === TOOL && !answered.has(c.id));
  if (pending.length === 0) break;
  for (const call of pending) {
    agent.addMessage({ id: crypto.randomUUID(), role: "tool", toolCallId: call.id, content: "confirmed" });
  }
}
