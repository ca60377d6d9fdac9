#!/usr/bin/env node
// Drives the public HAIP v1 TypeScript SDK (@haip/sdk 1.0.1, built by setup.sh) as a client
// under test against a HAIP WebSocket server, so that another tool can judge its traffic.
//
//   HAIP_SDK_DIR=/tmp/haip-src/haip-sdk node driver.js ws://HOST:PORT/ [--shim] [--send-anyway]
//
// What it does: createHAIPClient({ url, token }) with the SDK's defaults otherwise, connect(),
// wait for the SDK to report the handshake (the server's HAI reaching it), then
// sendTextMessage("USER", "hello from the HAIP SDK", "user") once. After that it only keeps
// the connection open: whatever is sent later (PONG to a PING, heartbeat PINGs, replays) is
// the SDK's own doing. It exits 0 when the server closes the connection, 0 after 60 s
// (HAIP_DRIVER_TIMEOUT_MS), 1 on a usage or setup error and 2 when it cannot connect.
//
// Options:
//   --shim         convert incoming text frames from Buffer to string before the SDK sees them
//                  (see installShim below). Without it the SDK never sees the server's HAI.
//   --stay         after the server closes or drops the connection, keep running so the SDK's
//                  own reconnection (and resume) can follow; the run stops the process.
//   --send-anyway  send the text message even if the handshake did not complete within
//                  HAIP_HANDSHAKE_TIMEOUT_MS (default 10000); without it the driver sends
//                  nothing of its own then and just waits.
// Environment:
//   HAIP_SDK_DIR   the SDK package directory (holding package.json and dist/), or its entry file
//   WIREPROBE_TOKEN, else HAIP_TOKEN
//                  the token the SDK puts in the URL as ?token= (default "wireprobe-test-token")
//
// Every event is one line on stderr: "[haip-sdk-driver +MS] EVENT detail". Frames are logged
// as they pass the ws socket the SDK uses (frame-out / frame-in); the SDK's own console logging
// is folded onto stderr as "sdk-log" lines. Nothing is written to stdout.
"use strict";

const path = require("path");
const fs = require("fs");
const util = require("util");

const started = Date.now();
function oneLine(s) {
  return String(s).replace(/\r?\n/g, "\\n");
}
function log(event, detail) {
  const d = detail === undefined ? "" : " " + oneLine(detail);
  process.stderr.write(`[haip-sdk-driver +${Date.now() - started}ms] ${event}${d}\n`);
}

// ---- arguments -------------------------------------------------------------------------------
const args = process.argv.slice(2);
const flags = new Set(args.filter(a => a.startsWith("--")));
const positional = args.filter(a => !a.startsWith("--"));
for (const f of flags) {
  if (f !== "--shim" && f !== "--send-anyway" && f !== "--stay") {
    log("usage-error", `unknown option ${f}`);
    process.exit(1);
  }
}
if (positional.length !== 1 || !/^wss?:\/\//.test(positional[0])) {
  log("usage-error", "usage: node driver.js ws://HOST:PORT/ [--shim] [--send-anyway] [--stay]");
  process.exit(1);
}
const url = positional[0];
const shim = flags.has("--shim");
const sendAnyway = flags.has("--send-anyway");
const stay = flags.has("--stay");
// The token wireprobe hands a client under test (`{token}`, WIREPROBE_TOKEN) comes first.
const token = process.env.WIREPROBE_TOKEN || process.env.HAIP_TOKEN || "wireprobe-test-token";
const lifetimeMs = Number(process.env.HAIP_DRIVER_TIMEOUT_MS || 60000);
const handshakeMs = Number(process.env.HAIP_HANDSHAKE_TIMEOUT_MS || 10000);
const TEXT = "hello from the HAIP SDK";

// ---- locate the built SDK and the ws module it uses -----------------------------------------
const sdkPath = process.env.HAIP_SDK_DIR;
if (!sdkPath) {
  log("setup-error", "HAIP_SDK_DIR is not set (run setup.sh first)");
  process.exit(1);
}
let sdk, sdkDir, WebSocket;
try {
  const resolved = path.resolve(sdkPath);
  sdkDir = fs.statSync(resolved).isDirectory() ? resolved : path.dirname(resolved);
  sdk = require(resolved);
  // Resolve "ws" the way dist/transports/websocket.js does, so we patch the very class the
  // SDK instantiates (same file, so the same entry in Node's module cache).
  const transportDir = [path.join(sdkDir, "dist", "transports"), path.join(sdkDir, "transports"), sdkDir]
    .find(d => fs.existsSync(d));
  WebSocket = require(require.resolve("ws", { paths: [transportDir] }));
  const wsVersion = require(require.resolve("ws/package.json", { paths: [transportDir] })).version;
  let sdkVersion = "?";
  try {
    sdkVersion = require(require.resolve("./package.json", { paths: [sdkDir, path.dirname(sdkDir)] })).version;
  } catch (_) {}
  log("sdk-loaded", `dir=${sdkDir} sdk=${sdkVersion} ws=${wsVersion} node=${process.version} shim=${shim}`);
} catch (e) {
  log("setup-error", `cannot load the SDK from ${sdkPath}: ${e && e.message}`);
  process.exit(1);
}
if (typeof sdk.createHAIPClient !== "function") {
  log("setup-error", "the module has no createHAIPClient export");
  process.exit(1);
}

// The SDK logs through console.debug/info/warn/error (to stdout for debug/info); fold all of
// it onto stderr, one line per call.
for (const level of ["log", "debug", "info", "warn", "error"]) {
  console[level] = (...a) => log("sdk-log", `${level} ${util.format(...a)}`);
}

// ---- observation, and the optional shim --------------------------------------------------------
// Logging only: every frame the SDK sends and every frame/event its socket receives. This
// never changes what is sent or what the SDK sees.
const origSend = WebSocket.prototype.send;
WebSocket.prototype.send = function (data, ...rest) {
  const kind = typeof data === "string" ? "text" : `binary ${Buffer.byteLength(data)}B`;
  log("frame-out", `${kind} ${typeof data === "string" ? data : ""}`);
  return origSend.call(this, data, ...rest);
};
const origPong = WebSocket.prototype.pong;
// ws 8 answers a ping by itself (autoPong) and the SDK's transport calls pong() again, so a
// WebSocket ping normally shows two ws-pong-out lines: the first echoes the ping's data.
WebSocket.prototype.pong = function (...a) {
  log("ws-pong-out", `data=${a[0] === undefined ? 0 : Buffer.byteLength(a[0])}B`);
  return origPong.apply(this, a);
};
const origPing = WebSocket.prototype.ping;
WebSocket.prototype.ping = function (...a) {
  log("ws-ping-out", "(the SDK transport's WebSocket-level heartbeat)");
  return origPing.apply(this, a);
};

const origEmit = WebSocket.prototype.emit;
WebSocket.prototype.emit = function (event, ...a) {
  if (event === "message") {
    let [data, isBinary] = a;
    const asText = Buffer.isBuffer(data) ? data.toString("utf8") : String(data);
    log("frame-in", isBinary ? `binary ${data.length}B` : `text ${asText}`);
    if (shim && isBinary === false && Buffer.isBuffer(data)) {
      // THE SHIM (ours, not the SDK's behaviour). ws v8 delivers every message, text or
      // binary, as a Buffer plus an isBinary flag (ws v7 and older delivered text frames as
      // strings). The SDK's WebSocketTransport still tests `typeof data === "string"`, so with
      // ws 8 (its own dependency, ^8.0.0) every text frame falls into its `Buffer` branch and
      // is emitted as "binary" data, which the client only logs: the server's HAI never
      // reaches the client, the handshake never completes, and no PING is ever answered.
      // Converting a text frame's Buffer to a UTF-8 string here restores what the SDK was
      // written against; binary frames are passed through untouched.
      a = [asText, isBinary];
      log("shim", "text frame handed to the SDK as a string");
    }
    return origEmit.call(this, event, ...a);
  }
  if (event === "ping") log("ws-ping-in", "");
  else if (event === "pong") log("ws-pong-in", "");
  else if (event === "close") log("ws-close", `code=${a[0]} reason=${oneLine(a[1] || "")}`);
  else if (event === "open") log("ws-open", "");
  return origEmit.call(this, event, ...a);
};

// ---- the client under test ---------------------------------------------------------------
const client = sdk.createHAIPClient({ url, token });
let connected = false;
let handshakeDone = false;
let messageSent = false;
let timeLimitHit = false;
let exiting = false;

function finish(why, code) {
  if (exiting) return;
  exiting = true;
  log("exit", `${why} (exit ${code})`);
  // No graceful client.disconnect() when the server closed: the socket is already gone, and
  // the SDK would otherwise schedule its reconnects.
  process.exit(code);
}

client.setHandlers({
  onConnect: () => {
    connected = true;
    log("connected", url);
  },
  onHandshake: p => log("handshake-complete", JSON.stringify(p)),
  onDisconnect: reason => {
    log("disconnected", `reason=${JSON.stringify(reason)}`);
    if (timeLimitHit) finish("time limit, closed by the driver", 0);
    else if (connected && stay) log("staying", "the SDK's own reconnection decides what follows");
    else if (connected) finish("server closed the connection", 0);
    else finish("could not connect", 2);
  },
  onError: e => log("sdk-error", JSON.stringify(e)),
  onPing: p => log("sdk-got-ping", JSON.stringify(p)),
  onPong: p => log("sdk-got-pong", JSON.stringify(p)),
  onTextMessage: p => log("sdk-got-text", JSON.stringify(p)),
  onMessage: m => log("sdk-got-message", `${m.type} seq=${m.seq}`),
});
// HAIPClientImpl is an EventEmitter that emits "error": without a listener Node would throw.
client.on("error", e => log("client-error-event", e && e.message ? e.message : JSON.stringify(e)));

async function sendTheMessage(why) {
  if (messageSent) return;
  messageSent = true;
  log("send-text", `${why}: sendTextMessage("USER", ${JSON.stringify(TEXT)}, "user")`);
  try {
    const id = await client.sendTextMessage("USER", TEXT, "user");
    log("send-text-done", `message_id=${id}`);
  } catch (e) {
    log("send-text-failed", e && e.message);
  }
}

client.on("handshake", () => {
  handshakeDone = true;
  sendTheMessage("handshake complete");
});

setTimeout(() => {
  if (!exiting) {
    timeLimitHit = true;
    log("time-limit", `${lifetimeMs} ms reached, disconnecting`);
    client.disconnect().catch(() => {});
    setTimeout(() => finish("time limit, closed by the driver", 0), 2000).unref();
  }
}, lifetimeMs).unref();
// Keeps the process alive for the whole lifetime even when the SDK has no timers running.
const keepAlive = setInterval(() => {}, 1 << 30);

(async () => {
  log("connecting", `${url} token=${token}`);
  try {
    await client.connect();
  } catch (e) {
    log("connect-failed", e && e.message);
    clearInterval(keepAlive);
    finish("could not connect", 2);
    return;
  }
  setTimeout(() => {
    if (handshakeDone || exiting) return;
    log("handshake-timeout",
      `no HAI reached the SDK within ${handshakeMs} ms${shim ? "" : " (expected without --shim)"}`);
    if (sendAnyway) sendTheMessage("--send-anyway");
  }, handshakeMs);
})();
