// LLM API mock for the AG-UI servers that need a model: @copilotkit/aimock's LLMock (OpenAI
// Chat/Responses, Anthropic Messages, Gemini and the other providers it speaks, all on one
// port) with one fixture whose answer is computed per request from the conversation, so
// wireprobe's directives (suites/agui/flows.toml, 'wireprobe: VERB ARGS' in the last user
// message) reach the flows a model can show. Needs no network.
//   last message is a tool result        -> text 'The tool returned: RESULT'
//   'wireprobe: say WORDS' / 'chunks WORDS' -> text WORDS
//   'wireprobe: reason TEXT'             -> reasoning 'Reasoning: TEXT', then text 'Answer: TEXT'
//   'wireprobe: tool NAME JSON'          -> a call of NAME with JSON (the server's own tool)
//   'wireprobe: frontend NAME JSON'      -> a call of NAME with JSON (a tool of input.tools)
//   'wireprobe: fail'                    -> HTTP 400 with an OpenAI-shaped error body
//   anything else (or no directive)      -> text 'Hello from the aimock LLM.'
// The servers reach it through their SDK's base-URL setting, with fake keys, as the upstream
// AG-UI Dojo does (URL = the line this prints):
//   OPENAI_BASE_URL=URL/v1 OPENAI_API_BASE=URL/v1 OPENAI_API_KEY=sk-mock
//   GOOGLE_GEMINI_BASE_URL=URL GOOGLE_API_KEY=mock ANTHROPIC_BASE_URL=URL ANTHROPIC_API_KEY=mock
// Usage: node llm_mock.mjs PORT   (prints 'llm mock ready at http://127.0.0.1:PORT' on stdout)
// Resolve the package from the npm prefix given in AIMOCK_PREFIX (pinned @copilotkit/aimock@1.43.0,
// as for aimock_server.mjs).
import { createRequire } from 'node:module';
import path from 'node:path';

const prefix = process.env.AIMOCK_PREFIX;
if (!prefix) throw new Error('set AIMOCK_PREFIX to the npm prefix holding @copilotkit/aimock');
const require = createRequire(path.join(path.resolve(prefix), 'package.json'));
const { LLMock } = await import(require.resolve('@copilotkit/aimock'));

const textOf = (content) =>
  typeof content === 'string' ? content
    : Array.isArray(content) ? content.map((p) => (typeof p === 'string' ? p : p?.text ?? '')).join('')
      : '';

function reply(req) {
  const messages = req.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return { content: `The tool returned: ${textOf(last.content)}` };
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const text = textOf(user?.content);
  const at = text.lastIndexOf('wireprobe:');
  if (at < 0) return { content: 'Hello from the aimock LLM.' };
  // The directive runs to the end of its line: some frameworks append their own text after it.
  const line = text.slice(at + 'wireprobe:'.length).split('\n')[0].trim();
  const space = line.indexOf(' ');
  const verb = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? '' : line.slice(space + 1).trim();
  switch (verb) {
    case 'say':
    case 'chunks':
      return { content: rest || 'ok' };
    case 'reason':
      return { content: `Answer: ${rest}`, reasoning: `Reasoning: ${rest}` };
    case 'tool':
    case 'frontend': {
      const sp = rest.indexOf(' ');
      const name = sp < 0 ? rest : rest.slice(0, sp);
      const args = sp < 0 ? '{}' : rest.slice(sp + 1).trim() || '{}';
      return { toolCalls: [{ name, arguments: args }] };
    }
    case 'fail':
      return { error: { message: 'wireprobe: fail (the mock LLM refuses)', type: 'invalid_request_error' }, status: 400 };
    default:
      return { content: `Directive '${verb}' is not scripted here.` };
  }
}

const mock = new LLMock({ host: '127.0.0.1', port: Number(process.argv[2]), logLevel: 'warn' });
mock.on({ predicate: () => true }, reply);
const url = await mock.start();
console.log(`llm mock ready at ${url}`);

const stop = () => mock.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
