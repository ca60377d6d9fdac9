"""AG-UI server: a Google ADK LlmAgent (model gemini-2.5-flash) with one backend tool (echo) and
an AGUIToolset (the client's input.tools, proxied to the client), wrapped in ag-ui-adk's ADKAgent
with in-memory services and mounted with add_adk_fastapi_endpoint (which also adds
/agui/capabilities and /agents/state). No network, no real key: the Gemini API is
scripts/agui-servers/llm_mock.mjs (aimock), reached through google-genai's base-URL variable.
Env (the interop script starts the mock first and exports them):
  GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:MOCKPORT   GOOGLE_API_KEY=mock (any value)
The wrapper sets GOOGLE_GENAI_USE_VERTEXAI=false. Flows the mock shows: text, reasoning (thought
parts), a backend call of echo, a frontend call of a tool from input.tools, a failing model call.
ADK_AGUI_TOOLSET=0 leaves the AGUIToolset out (no frontend tools): with it, ag-ui-adk 0.11.0
answers every input that omits `tools` (optional in ag-ui-protocol 1.0.0, where it parses to
None) with RUN_ERROR "object of type 'NoneType' has no len()" (ClientProxyToolset.__init__).
Pins: ag-ui-adk==0.11.0 google-adk==2.15.0 google-genai==2.34.0 ag-ui-protocol==1.0.0
fastapi==0.165.0 uvicorn==0.55.0.
Usage: python adk_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import os
import sys

if not os.environ.get('GOOGLE_GEMINI_BASE_URL'):
    sys.exit('adk_server.py: set GOOGLE_GEMINI_BASE_URL to the LLM mock (scripts/agui-servers/llm_mock.mjs)')
os.environ.setdefault('GOOGLE_API_KEY', 'mock')
os.environ['GOOGLE_GENAI_USE_VERTEXAI'] = 'false'

import uvicorn  # noqa: E402
from ag_ui_adk import ADKAgent, AGUIToolset, add_adk_fastapi_endpoint  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402


def echo(x: int) -> str:
    """Echo the argument back as JSON."""
    return json.dumps({'x': x})


llm_agent = LlmAgent(
    name='adk_mock',
    model='gemini-2.5-flash',
    instruction='You are a test agent.',
    tools=[echo] + ([] if os.environ.get('ADK_AGUI_TOOLSET') == '0' else [AGUIToolset()]),
)
agent = ADKAgent(adk_agent=llm_agent, app_name='wireprobe', user_id='wireprobe', use_in_memory_services=True)

app = FastAPI()
add_adk_fastapi_endpoint(app, agent, path='/agui')

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
