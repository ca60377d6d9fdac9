"""AG-UI server: the ag-ui-protocol SDK's minimal FastAPI server. Parses RunAgentInput with
ag_ui.core, streams RUN_STARTED, one text message (START/CONTENT/END) and RUN_FINISHED,
encoded by ag_ui.encoder.EventEncoder, echoing the input's threadId and runId.
Usage: python ag_ui_protocol_server.py PORT   (serves POST http://127.0.0.1:PORT/agui)"""
import sys
import uuid

import uvicorn
from ag_ui.core import (
    EventType,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from ag_ui.encoder import EventEncoder
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

app = FastAPI()


@app.post('/agui')
async def agui(input_data: RunAgentInput, request: Request):
    encoder = EventEncoder(accept=request.headers.get('accept'))

    async def events():
        yield encoder.encode(RunStartedEvent(
            type=EventType.RUN_STARTED, thread_id=input_data.thread_id, run_id=input_data.run_id))
        message_id = str(uuid.uuid4())
        yield encoder.encode(TextMessageStartEvent(
            type=EventType.TEXT_MESSAGE_START, message_id=message_id, role='assistant'))
        yield encoder.encode(TextMessageContentEvent(
            type=EventType.TEXT_MESSAGE_CONTENT, message_id=message_id, delta='Hello world!'))
        yield encoder.encode(TextMessageEndEvent(
            type=EventType.TEXT_MESSAGE_END, message_id=message_id))
        yield encoder.encode(RunFinishedEvent(
            type=EventType.RUN_FINISHED, thread_id=input_data.thread_id, run_id=input_data.run_id))

    return StreamingResponse(events(), media_type=encoder.get_content_type())


if __name__ == '__main__':
    uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
