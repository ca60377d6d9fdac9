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
The agent is built with parsing=None: langroid's default ParsingConfig fetches tiktoken's
cl100k_base file from the network at construction (no network here, so the import fails).
Pins: ag-ui-langroid==0.2.0 langroid==0.69.16 ag-ui-protocol==1.0.0 fastapi==0.165.0
uvicorn==0.55.0.
Usage: python langroid_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import sys

import langroid as lr
import uvicorn
from ag_ui_langroid import LangroidAgent, add_langroid_fastapi_endpoint
from fastapi import FastAPI
from langroid.language_models.mock_lm import MockLMConfig


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

    def handle(self) -> str:
        return json.dumps({'x': self.x})


chat_agent = lr.ChatAgent(lr.ChatAgentConfig(
    name='langroid-mock',
    llm=MockLMConfig(response_fn=directive_reply, default_response='Hello from the Langroid mock LM.'),
    system_message='You are a test agent.',
    # The default ParsingConfig builds a tiktoken tokenizer, which downloads its BPE file from
    # openaipublic.blob.core.windows.net on first use: no parser, no download.
    parsing=None,
))
chat_agent.enable_message(EchoTool)

app = FastAPI()
add_langroid_fastapi_endpoint(app, LangroidAgent(chat_agent, name='langroid-mock'), '/agui')

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
