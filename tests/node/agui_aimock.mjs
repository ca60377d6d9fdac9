// An AG-UI server for tests/node_interop.rs: @copilotkit/aimock's AGUIMock with one fixture,
// a text reply its own builder makes, for any input. Prints "listening URL" when it serves.
import { AGUIMock } from '@copilotkit/aimock';

const mock = new AGUIMock({ host: '127.0.0.1', port: 0 });
mock.onMessage(/.*/, 'Hello from aimock.');
const url = await mock.start();
console.log(`listening ${url}`);
process.stdin.on('end', () => mock.stop().finally(() => process.exit(0)));
process.stdin.resume();
