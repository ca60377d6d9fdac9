"""AG-UI server: an AWS Strands Agent on strands' OpenAIModel (model gpt-4o) with one backend tool
(echo), wrapped in ag-ui-strands' StrandsAgent and mounted with add_strands_fastapi_endpoint
(input.tools become proxy tools the adapter leaves to the client). No network, no real key: the
OpenAI Chat Completions API is scripts/agui-servers/llm_mock.mjs (aimock), passed to OpenAIModel
as client_args (api_key, base_url).
Env (the interop script starts the mock first and exports them):
  OPENAI_BASE_URL=http://127.0.0.1:MOCKPORT/v1   OPENAI_API_KEY=sk-mock (any value)
Flows the mock shows: text, reasoning (if strands reads the mock's reasoning_content), a backend
call of echo, a frontend call of a tool from input.tools, a failing model call.
Pins: ag-ui-strands==1.0.2 strands-agents[openai]==1.65.0 ag-ui-protocol==1.0.0 openai==3.63.0
fastapi==0.165.0 uvicorn==0.55.0.
Usage: python strands_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import os
import sys

if not os.environ.get('OPENAI_BASE_URL'):
    sys.exit('strands_server.py: set OPENAI_BASE_URL to the LLM mock (scripts/agui-servers/llm_mock.mjs)')
os.environ.setdefault('OPENAI_API_KEY', 'sk-mock')

import uvicorn  # noqa: E402
from ag_ui_strands import StrandsAgent, add_strands_fastapi_endpoint  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from strands import Agent, tool  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402


@tool
def echo(x: int) -> str:
    """Echo the argument back as JSON.

    Args:
        x: the value to echo
    """
    return json.dumps({'x': x})


model = OpenAIModel(
    client_args={'api_key': os.environ['OPENAI_API_KEY'], 'base_url': os.environ['OPENAI_BASE_URL']},
    model_id='gpt-4o',
)
core = Agent(model=model, tools=[echo], system_prompt='You are a test agent.', callback_handler=None)

app = FastAPI()
add_strands_fastapi_endpoint(app, StrandsAgent(core, name='strands_mock'), '/agui')

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
