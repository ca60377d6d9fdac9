"""AG-UI server: a pydantic-ai Agent on TestModel (no network, no key) with one tool,
served by AGUIAdapter.dispatch_request in a Starlette POST route.
Usage: python pydantic_ai_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import sys

import uvicorn
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

agent = Agent(TestModel(), instructions='You are a test agent.')


@agent.tool_plain
def get_weather(city: str) -> str:
    """Return a canned weather report for a city."""
    return f'Sunny in {city}'


async def agui(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route('/agui', agui, methods=['POST'])])

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
