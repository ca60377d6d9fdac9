"""AG-UI server: a one-node LangGraph graph whose chat model is langchain-core's
GenericFakeChatModel (no network, no key), mounted with ag-ui-langgraph's
add_langgraph_fastapi_endpoint.
Usage: python langgraph_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import itertools
import sys

import uvicorn
from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

# An endless supply of the same canned answer: the fake model pops one per call.
model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content='Hello from a fake model.')]))


async def chat(state: MessagesState, config: RunnableConfig):
    return {'messages': [await model.ainvoke(state['messages'], config)]}


builder = StateGraph(MessagesState)
builder.add_node('chat', chat)
builder.add_edge(START, 'chat')
builder.add_edge('chat', END)
graph = builder.compile(checkpointer=MemorySaver())

app = FastAPI()
add_langgraph_fastapi_endpoint(app, LangGraphAgent(name='fake', graph=graph), path='/agui')

if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
