"""AG-UI server: a Langroid ChatAgent on langroid's MockLMConfig (no network, no key) with one
backend tool (EchoTool, request "echo"), mounted with ag-ui-langroid's
add_langroid_fastapi_endpoint (which also serves GET /agui/health). The mock's response_fn
answers from the last message it is handed, so wireprobe's directives (suites/agui/flows.toml)
reach the flows the model can show:
  'wireprobe: say WORDS' / 'chunks WORDS'  -> text WORDS
  'wireprobe: tool NAME JSON'              -> Langroid's JSON tool form {"request": NAME, ...JSON}
                                              (echo runs on the server)
  'wireprobe: frontend NAME JSON'          -> the same form for a tool of input.tools, which the
                                              adapter leaves to the client
  'wireprobe: fail'                        -> the model call raises
  anything else                            -> 'Hello from the Langroid mock LM.'
`import langroid` needs tiktoken's cl100k_base file, which tiktoken downloads on first use; the
wrapper swaps tiktoken's OpenAI encodings for a byte-level one before the import (see below).
Pins: ag-ui-langroid==0.2.0 langroid==0.69.16 ag-ui-protocol==1.0.0 fastapi==0.165.0
uvicorn==0.55.0.
Usage: python langroid_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import sys

import tiktoken_ext.openai_public

# `import langroid` builds a tiktoken tokenizer at import time (langroid.parsing.repo_loader),
# and tiktoken downloads its BPE file from openaipublic.blob.core.windows.net on first use.
# With no network that import fails, so every OpenAI encoding is replaced by a byte-level one
# (one token per byte): token counts are rough, which a mock model does not mind.
tiktoken_ext.openai_public.load_tiktoken_bpe = lambda *args, **kwargs: {bytes([b]): b for b in range(256)}

import langroid as lr  # noqa: E402
import uvicorn  # noqa: E402
from ag_ui_langroid import LangroidAgent, add_langroid_fastapi_endpoint  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from langroid.language_models.mock_lm import MockLMConfig  # noqa: E402


def directive_reply(msg: str) -> str:
    """The mock model's answer to the last message it is handed."""
    msg = msg or ''
    at = msg.rfind('wireprobe:')
    if at < 0:
        return 'Hello from the Langroid mock LM.'
    verb, _, rest = msg[at + len('wireprobe:'):].strip().partition(' ')
    if verb in ('say', 'chunks'):
        return rest or 'ok'
    if verb in ('tool', 'frontend'):
        name, _, args = rest.partition(' ')
        return json.dumps({'request': name, **json.loads(args or '{}')})
    if verb == 'fail':
        raise RuntimeError('wireprobe: fail (the mock LM raises)')
    return f'Directive {verb!r} is not scripted here.'


class EchoTool(lr.ToolMessage):
    request: str = 'echo'
    purpose: str = 'Echo the argument <x> back as JSON.'
    x: int


class MockChatAgent(lr.ChatAgent):
    """A ChatAgent that never infers a tool from JSON lacking a "request" field. By default
    langroid reads the user's own 'wireprobe: tool echo {"x": 1}' as a call of echo (the only
    tool whose fields match), decides the LLM cannot respond to it, and the adapter then answers
    RUN_ERROR "Agent returned None". Set in __init__, so the per-thread clones have it too.
    The echo handler is a method of the class for the same reason: a ToolMessage.handle is
    installed by enable_message with setattr on the one instance, and the adapter runs each
    thread on agent.clone(0), which does not carry it (the adapter then takes echo for a
    frontend tool)."""

    def __init__(self, config):
        super().__init__(config)
        self.enabled_requests_for_inference = set()

    def echo(self, msg: 'EchoTool') -> str:
        return json.dumps({'x': msg.x})


chat_agent = MockChatAgent(lr.ChatAgentConfig(
    name='langroid-mock',
    llm=MockLMConfig(response_fn=directive_reply, default_response='Hello from the Langroid mock LM.'),
    system_message='You are a test agent.',
))
chat_agent.enable_message(EchoTool)

app = FastAPI()
add_langroid_fastapi_endpoint(app, LangroidAgent(chat_agent, name='langroid-mock'), '/agui')

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
