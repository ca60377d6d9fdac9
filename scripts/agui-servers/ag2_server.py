"""AG-UI server: an AG2 Agent whose model is ag2.testing's scripted test client (no network, no
key), with one backend tool (echo), served by ag2.ag_ui.AGUIStream(agent).build_asgi() as a
Starlette route. The script is chosen per model call from the last user message, so wireprobe's
directives (suites/agui/flows.toml) reach the flows the model can show:
  'wireprobe: say WORDS' / 'chunks WORDS'  -> text WORDS
  'wireprobe: reason TEXT'                 -> a ModelReasoning event, then text
  'wireprobe: tool NAME JSON'              -> a call of NAME with JSON (echo runs on the server)
  'wireprobe: frontend NAME JSON'          -> a call of NAME (a client tool from input.tools)
  'wireprobe: fail'                        -> the model call raises
  anything else                            -> 'Hello from the AG2 test model.'
After a tool result the model answers with text quoting it.
Pins (scripts/interop-agui.sh style): ag2[ag-ui]==1.2.1 ag-ui-protocol==1.0.0 starlette==1.10.0
uvicorn==0.55.0.
Usage: python ag2_server.py PORT   (serves POST http://127.0.0.1:PORT/agui; GET = capabilities)"""
import json
import sys

import uvicorn
from ag2 import Agent
from ag2.ag_ui import AGUIStream
from ag2.events import ModelReasoning, ModelRequest, TextInput, ToolCallEvent, ToolResultsEvent
from ag2.testing import TestClient, TestConfig
from starlette.applications import Starlette
from starlette.routing import Route


def directive_turns(messages):
    """The scripted turn(s) for this model call, read off the conversation so far."""
    if messages and isinstance(messages[-1], ToolResultsEvent):
        results = ', '.join(
            ' '.join(getattr(part, 'content', str(part)) for part in r.result.parts)
            if hasattr(r, 'result') else str(r) for r in messages[-1].results)
        return (f'The tool returned: {results}',)
    text = ''
    for event in reversed(messages):
        if isinstance(event, ModelRequest):
            text = ' '.join(p.content for p in event.parts if isinstance(p, TextInput))
            break
        if isinstance(event, TextInput):
            text = event.content
            break
    if not text.startswith('wireprobe:'):
        return ('Hello from the AG2 test model.',)
    verb, _, rest = text[len('wireprobe:'):].strip().partition(' ')
    if verb in ('say', 'chunks'):
        return (rest or 'ok',)
    if verb == 'reason':
        return (ModelReasoning(f'Reasoning: {rest}'), f'Answer: {rest}')
    if verb in ('tool', 'frontend'):
        name, _, args = rest.partition(' ')
        return (ToolCallEvent(name, arguments=args.strip() or '{}'),)
    if verb == 'fail':
        return (RuntimeError('wireprobe: fail (the test model raises)'),)
    return (f'Directive {verb!r} is not scripted here.',)


class DirectiveClient(TestClient):
    """ag2.testing.TestClient with its script picked per call instead of fixed up front."""

    def __init__(self) -> None:
        super().__init__(raise_tool_errors=False)

    async def __call__(self, messages, context, **kwargs):
        self.events = iter(directive_turns(list(messages)))
        return await super().__call__(messages, context, **kwargs)


class DirectiveConfig(TestConfig):
    def create(self) -> DirectiveClient:
        return DirectiveClient()


def echo(x: int) -> str:
    """Echo the argument back as JSON."""
    return json.dumps({'x': x})


agent = Agent('ag2-test', 'You are a test agent.', config=DirectiveConfig(), tools=[echo])
stream = AGUIStream(agent)
app = Starlette(routes=[Route('/agui', stream.build_asgi())])

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
