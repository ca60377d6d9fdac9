// The peer of `wireprobe check haip` in scripts/bench-check.sh: reads the same NDJSON
// transcript (one {"from","at_ms","event"} line each), parses every line and validates its
// event with ajv against HAIP's envelope schema (src/protocol/haip/envelope.schema.json),
// and prints "EVENTS INVALID" on stdout. Schema validation only: no sequencing, lifecycle or
// cross-event rule, which wireprobe's check does besides.
//   node ajv-check.mjs SCHEMA.json TRANSCRIPT.ndjson
import { readFileSync, createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import Ajv from "ajv";

const [schemaPath, transcript] = process.argv.slice(2);
const ajv = new Ajv({ allErrors: false, strict: false });
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));
let events = 0;
let invalid = 0;
const lines = createInterface({ input: createReadStream(transcript), crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { event } = JSON.parse(line);
  events += 1;
  if (!validate(event)) invalid += 1;
}
console.log(`${events} ${invalid}`);
