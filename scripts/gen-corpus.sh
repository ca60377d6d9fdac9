#!/usr/bin/env bash
# Regenerates the generated seeds in corpus/: for each protocol a valid sequence
# (corpus/P/valid/gen-sequence.ndjson) and one input per mutator
# (corpus/P/invalid/gen-MUTATOR--RULE.json, or .bin for raw bytes), all from seed 1. Out-of-order
# mutators are left out: their events are valid alone.
# tests/it/corpus.rs holds every file to the rule its name gives.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${WIREPROBE:-target/release/wireprobe}
[ -x "$bin" ] || cargo build --release --locked
for p in haip huma nuum; do
  mkdir -p "corpus/$p/valid" "corpus/$p/invalid"
  rm -f corpus/$p/invalid/gen-* corpus/$p/valid/gen-*
  "$bin" gen "$p" --kind valid --count 20 --seed 1 > "corpus/$p/valid/gen-sequence.ndjson"
  # The mutator list is in the error for an unknown kind.
  mutators=$({ "$bin" gen "$p" --kind list-mutators 2>&1 || true; } | sed -n 's/.*known: //p' | tr -d ',')
  for m in $mutators; do
    "$bin" gen "$p" --kind "$m" --count 1 --seed 1 | python3 -c '
import base64, json, sys
line = json.loads(sys.stdin.readline())
if line["answer"] == "sequence":
    sys.exit(0)  # a valid event on its own: only its place in a sequence breaks the rule
if len(json.dumps(line)) > 1 << 20:
    sys.exit(0)  # megabytes of the same byte teach a fuzzer nothing a short seed does not
stem = "corpus/%s/invalid/gen-%s--%s" % (sys.argv[1], line["mutator"], line["breaks"])
if "raw_base64" in line:
    open(stem + ".bin", "wb").write(base64.b64decode(line["raw_base64"]))
elif "raw" in line:
    open(stem + ".bin", "wb").write(line["raw"].encode())
else:
    open(stem + ".json", "w").write(json.dumps(line["event"], ensure_ascii=False) + "\n")
' "$p"
  done
done
