"""AG-UI server: an Agno Agent on OpenAIChat (model gpt-4o) with one backend tool (echo), served
by AgentOS with the AGUI interface (AgentOS(agents=[agent], interfaces=[AGUI(agent=agent)])
.get_app(), POST /agui; input.tools become client tools the run leaves to the client). Telemetry
is off (telemetry=False, AGNO_TELEMETRY=false) and no database is configured. No network, no
real key: the OpenAI Chat Completions API is scripts/agui-servers/llm_mock.mjs (aimock).
Env (the interop script starts the mock first and exports them):
  OPENAI_BASE_URL=http://127.0.0.1:MOCKPORT/v1   OPENAI_API_KEY=sk-mock (any value)
Flows the mock shows: text, reasoning (if Agno surfaces the mock's reasoning_content), a backend
call of echo, a frontend call of a tool from input.tools, a failing model call.
Pins: agno[agui,os]==3.1.10 ag-ui-protocol==1.0.0 openai==3.63.0 fastapi==0.165.0
uvicorn==0.55.0.
Usage: python agno_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import json
import os
import sys

if not os.environ.get('OPENAI_BASE_URL'):
    sys.exit('agno_server.py: set OPENAI_BASE_URL to the LLM mock (scripts/agui-servers/llm_mock.mjs)')
os.environ.setdefault('OPENAI_API_KEY', 'sk-mock')
os.environ['AGNO_TELEMETRY'] = 'false'

import uvicorn  # noqa: E402
from agno.agent import Agent  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.os import AgentOS  # noqa: E402
from agno.os.interfaces.agui import AGUI  # noqa: E402


def echo(x: int) -> str:
    """Echo the argument back as JSON."""
    return json.dumps({'x': x})


agent = Agent(
    name='agno_mock',
    model=OpenAIChat(id='gpt-4o', base_url=os.environ['OPENAI_BASE_URL'], api_key=os.environ['OPENAI_API_KEY']),
    instructions='You are a test agent.',
    tools=[echo],
    telemetry=False,
)
agent_os = AgentOS(agents=[agent], interfaces=[AGUI(agent=agent)], telemetry=False)
app = agent_os.get_app()

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
