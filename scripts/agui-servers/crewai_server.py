"""AG-UI server: a CrewAI Flow (Flow[CopilotKitState], the upstream Dojo's agentic-chat shape)
whose one @start step streams litellm.acompletion (model openai/gpt-4o) through ag-ui-crewai's
copilotkit_stream, offering the client's tools (state.copilotkit.actions) and one backend tool
(echo, run by the flow itself and reported with copilotkit_emit_tool_result); mounted with
add_crewai_flow_fastapi_endpoint. No network, no real key: the OpenAI Chat Completions API is
scripts/agui-servers/llm_mock.mjs (aimock), passed to litellm as api_base.
Env (the interop script starts the mock first and exports them):
  OPENAI_API_BASE=http://127.0.0.1:MOCKPORT/v1 (or OPENAI_BASE_URL)   OPENAI_API_KEY=sk-mock
The wrapper also sets LITELLM_LOCAL_MODEL_COST_MAP=True (litellm otherwise fetches its model
price map at import), CREWAI_DISABLE_TELEMETRY=true, CREWAI_TRACING_ENABLED=false and
OTEL_SDK_DISABLED=true.
Flows the mock shows: text, reasoning, a backend call of echo, a frontend call of a tool from
input.tools, a failing model call.
ag-ui-crewai 1.0.0 answers HTTP 500 to every input that omits `tools` (optional in
ag-ui-protocol 1.0.0, where it parses to None): crewai_prepare_inputs iterates it ("TypeError:
'NoneType' object is not iterable"). CREWAI_FILL_TOOLS=1 is a diagnostic switch, off by
default: an ASGI middleware adds "tools": [] to a JSON body that has none (or null) before the
endpoint reads it, so the rest of the suite can be seen; it changes the input under test.
Pins: ag-ui-crewai==1.0.0 crewai==1.15.44 litellm==1.110.2 openai==2.54.0 ag-ui-protocol==1.0.0
fastapi==0.115.14 starlette==0.46.2 uvicorn==0.55.0 (the venv is about 1 GB).
Usage: python crewai_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import os
import sys

api_base = os.environ.get('OPENAI_API_BASE') or os.environ.get('OPENAI_BASE_URL')
if not api_base:
    sys.exit('crewai_server.py: set OPENAI_API_BASE to the LLM mock (scripts/agui-servers/llm_mock.mjs)')
os.environ.setdefault('OPENAI_API_KEY', 'sk-mock')
os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'
os.environ['CREWAI_DISABLE_TELEMETRY'] = 'true'
os.environ['CREWAI_TRACING_ENABLED'] = 'false'
os.environ['OTEL_SDK_DISABLED'] = 'true'

import uvicorn  # noqa: E402
from ag_ui_crewai import (  # noqa: E402
    CopilotKitState,
    add_crewai_flow_fastapi_endpoint,
    copilotkit_emit_tool_result,
    copilotkit_stream,
)
from crewai.flow.flow import Flow, start  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from litellm import acompletion  # noqa: E402

ECHO_TOOL = {
    'type': 'function',
    'function': {
        'name': 'echo',
        'description': 'Echo the argument back as JSON.',
        'parameters': {'type': 'object', 'properties': {'x': {'type': 'integer'}}, 'required': ['x']},
    },
}


class MockChatFlow(Flow[CopilotKitState]):
    @start()
    async def chat(self):
        for _ in range(4):  # a model turn, and one more after each round of echo calls
            response = await copilotkit_stream(await acompletion(
                model='openai/gpt-4o',
                api_base=api_base,
                api_key=os.environ['OPENAI_API_KEY'],
                messages=[{'role': 'system', 'content': 'You are a test agent.'}, *self.state.messages],
                tools=[*self.state.copilotkit.actions, ECHO_TOOL],
                parallel_tool_calls=False,
                stream=True,
            ))
            message = response.choices[0].message
            self.state.messages.append(message)
            echo_calls = [c for c in (message.tool_calls or []) if c.function.name == 'echo']
            if not echo_calls:
                return  # text, or a call of a client tool: left to the client
            for call in echo_calls:
                result = json.dumps(json.loads(call.function.arguments or '{}'))
                self.state.messages.append({'role': 'tool', 'content': result, 'tool_call_id': call.id})
                await copilotkit_emit_tool_result(call.id, result)


class FillAbsentTools:
    """ASGI middleware (CREWAI_FILL_TOOLS=1 only): a POSTed JSON object without `tools`, or
    with `tools: null`, gets `tools: []`. Anything else passes through unchanged."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope['type'] != 'http' or scope['method'] != 'POST':
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            if message['type'] != 'http.request':
                return await self.app(scope, receive, send)
            chunks.append(message.get('body', b''))
            more = message.get('more_body', False)
        body = b''.join(chunks)
        try:
            data = json.loads(body)
            if isinstance(data, dict) and data.get('tools') is None:
                data['tools'] = []
                body = json.dumps(data).encode()
                scope = dict(scope, headers=[(k, v) for k, v in scope['headers'] if k != b'content-length']
                             + [(b'content-length', str(len(body)).encode())])
        except ValueError:
            pass
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {'type': 'http.request', 'body': body, 'more_body': False}

        return await self.app(scope, replay, send)


app = FastAPI()
add_crewai_flow_fastapi_endpoint(app, MockChatFlow(), '/agui')
if os.environ.get('CREWAI_FILL_TOOLS') == '1':
    app.add_middleware(FillAbsentTools)

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
