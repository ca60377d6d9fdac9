// The official AG-UI encoder (@ag-ui/encoder, pinned in tests/node) as a filter for
// tests/node_interop.rs: one JSON event per stdin line in, its protobuf frame (4-byte length,
// one ag_ui.Event) out on stdout, in order.
import { EventEncoder } from '@ag-ui/encoder';
import { createInterface } from 'node:readline';

const encoder = new EventEncoder({ accept: 'application/vnd.ag-ui.event+proto' });
const frames = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim()) frames.push(encoder.encodeBinary(JSON.parse(line)));
}
process.stdout.write(Buffer.concat(frames.map((f) => Buffer.from(f))));
