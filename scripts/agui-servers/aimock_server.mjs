// AG-UI server: @copilotkit/aimock's AGUIMock with one fixture, a text reply built by the
// package's own builder (onMessage), matching any input (/.*/ also matches "", an input
// without a user message). Needs no network.
// Usage: node aimock_server.mjs PORT   (serves POST http://127.0.0.1:PORT/)
// Resolve the package from the npm prefix given in AIMOCK_PREFIX (the script's install dir).
import { createRequire } from 'node:module';
import path from 'node:path';

const prefix = process.env.AIMOCK_PREFIX;
if (!prefix) throw new Error('set AIMOCK_PREFIX to the npm prefix holding @copilotkit/aimock');
const require = createRequire(path.join(path.resolve(prefix), 'package.json'));
const { AGUIMock } = await import(require.resolve('@copilotkit/aimock'));

const mock = new AGUIMock({ host: '127.0.0.1', port: Number(process.argv[2]) });
mock.onMessage(/.*/, 'Hello from aimock.');
console.error(`aimock AG-UI mock at ${await mock.start()}/`);

const stop = () => mock.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
