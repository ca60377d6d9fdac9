"""AG-UI server: a Microsoft Agent Framework Agent on OpenAIChatCompletionClient (model gpt-4o)
with one backend tool (echo), mounted with agent-framework-ag-ui's
add_agent_framework_fastapi_endpoint (input.tools become frontend tools the adapter leaves to
the client). No network, no real key: the OpenAI Chat Completions API is
scripts/agui-servers/llm_mock.mjs (aimock).
Env (the interop script starts the mock first and exports them):
  OPENAI_BASE_URL=http://127.0.0.1:MOCKPORT/v1   OPENAI_API_KEY=sk-mock (any value)
Flows the mock shows: text, a backend call of echo, a frontend call of a tool from input.tools,
a failing model call (reasoning: the Chat Completions client reads none from the mock).
agent-framework-ag-ui 1.7.0 requires ag-ui-protocol<0.2 (the pre-1.0 SDK), so its own venv.
Pins: agent-framework-ag-ui==1.7.0 agent-framework-core==1.26.0 agent-framework-openai==1.17.0
ag-ui-protocol==0.1.22 fastapi==0.141.1 openai==3.63.0 uvicorn==0.55.0.
Usage: python agent_framework_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import os
import sys

if not os.environ.get('OPENAI_BASE_URL'):
    sys.exit('agent_framework_server.py: set OPENAI_BASE_URL to the LLM mock (scripts/agui-servers/llm_mock.mjs)')
os.environ.setdefault('OPENAI_API_KEY', 'sk-mock')

import uvicorn  # noqa: E402
from agent_framework import Agent  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint  # noqa: E402
from fastapi import FastAPI  # noqa: E402


def echo(x: int) -> str:
    """Echo the argument back as JSON."""
    return json.dumps({'x': x})


agent = Agent(
    name='agent_framework_mock',
    instructions='You are a test agent.',
    client=OpenAIChatCompletionClient(model='gpt-4o'),
    tools=[echo],
)

app = FastAPI()
# The endpoint refuses to start without an explicit authorization scope; one local caller.
add_agent_framework_fastapi_endpoint(app, agent, path='/agui', single_user=True)

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
