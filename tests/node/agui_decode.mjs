// The official AG-UI protobuf decoder (@ag-ui/proto, pinned in tests/node through
// @ag-ui/encoder) as a filter for tests/node_interop.rs: length-prefixed frames on stdin, one
// JSON event per line out, in order.
import { decode } from '@ag-ui/proto';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const data = Buffer.concat(chunks);
let at = 0;
while (at + 4 <= data.length) {
  const len = data.readUInt32BE(at);
  const frame = new Uint8Array(data.subarray(at + 4, at + 4 + len));
  process.stdout.write(JSON.stringify(decode(frame)) + '\n');
  at += 4 + len;
}
