"""AG-UI server: LlamaIndex's AGUIChatWorkflow (llama-index-protocols-ag-ui) on llama-index-core's
MockFunctionCallingLLM (no network, no key), with one backend tool (echo), mounted with
get_ag_ui_workflow_router in FastAPI. The package's router serves POST /run; it is mounted
under /agui, so the endpoint is /agui/run. The mock's response_generator answers per call from
the last user message (the workflow prefixes it with a <state> block when the input has state),
so wireprobe's directives (suites/agui/flows.toml) reach the flows the model can show:
  'wireprobe: say WORDS' / 'chunks WORDS'  -> text WORDS
  'wireprobe: tool NAME JSON'              -> a call of NAME with JSON (echo runs on the server)
  'wireprobe: frontend NAME JSON'          -> a call of NAME (the workflow treats input.tools as
                                              frontend tools and stops after the call)
  'wireprobe: fail'                        -> the model call raises
  anything else                            -> 'Hello from the LlamaIndex mock LLM.'
After a tool result the model answers with text quoting it.
Pins: llama-index-protocols-ag-ui==0.6.0 llama-index-core==0.14.25 ag-ui-protocol==1.0.0
fastapi==0.165.0 uvicorn==0.55.0.
Usage: python llama_index_server.py PORT   (serves POST http://127.0.0.1:PORT/agui/run)"""
import json
import sys
import uuid

import uvicorn
from fastapi import FastAPI
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.protocols.ag_ui.router import get_ag_ui_workflow_router


def directive_reply(messages, **kwargs):
    """The mock model's answer to one call, read off the conversation so far."""
    if messages and messages[-1].role == MessageRole.TOOL:
        return ChatMessage(role=MessageRole.ASSISTANT, content=f'The tool returned: {messages[-1].content}')
    text = next((m.content or '' for m in reversed(messages) if m.role == MessageRole.USER), '')
    at = text.rfind('wireprobe:')
    if at < 0:
        return ChatMessage(role=MessageRole.ASSISTANT, content='Hello from the LlamaIndex mock LLM.')
    verb, _, rest = text[at + len('wireprobe:'):].strip().partition(' ')
    if verb in ('say', 'chunks'):
        return ChatMessage(role=MessageRole.ASSISTANT, content=rest or 'ok')
    if verb in ('tool', 'frontend'):
        name, _, args = rest.partition(' ')
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[ToolCallBlock(
            tool_call_id=f'call-{uuid.uuid4().hex}', tool_name=name, tool_kwargs=json.loads(args or '{}'))])
    if verb == 'fail':
        raise RuntimeError('wireprobe: fail (the mock LLM raises)')
    return ChatMessage(role=MessageRole.ASSISTANT, content=f'Directive {verb!r} is not scripted here.')


def echo(x: int) -> str:
    """Echo the argument back as JSON."""
    return json.dumps({'x': x})


llm = MockFunctionCallingLLM(response_generator=directive_reply)
app = FastAPI()
app.include_router(get_ag_ui_workflow_router(llm=llm, backend_tools=[echo]), prefix='/agui')

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
