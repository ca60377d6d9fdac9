#!/usr/bin/env bash
# Measures `wireprobe check haip` on generated transcripts: events per second on one core
# with schema, rules and lifecycle on, and peak memory at two lengths (it must not grow);
# beside it, on the same core and the same events, ajv validating each event against HAIP's
# envelope schema (scripts/bench-check/, installed with npm on first use), and the ratio.
# Then every other protocol's `check` on EVENTS/10 events from `wireprobe gen` (one consistent
# sequence, judged as sent by the side wireprobe plays), in events per second.
# Usage: scripts/bench-check.sh [EVENTS]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000000}"
small=$((n / 10))
cargo build --release --quiet --bin wireprobe --example haip_transcript
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
./target/release/examples/haip_transcript "$small" > "$dir/small.ndjson"
./target/release/examples/haip_transcript "$n" > "$dir/big.ndjson"

pin() { if command -v taskset >/dev/null; then taskset -c 0 "$@"; else "$@"; fi; }

measure() { # file -> "seconds peak_kib"
  local file="$1" start end rss
  start=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    rss=$( { pin /usr/bin/time -f '%M' ./target/release/wireprobe check haip "$file" > /dev/null 2> "$dir/err"; } 2>&1; tail -n1 "$dir/err")
  else
    pin ./target/release/wireprobe check haip "$file" > /dev/null 2> "$dir/err"
    rss="n/a"
  fi
  end=$(date +%s.%N)
  echo "$(echo "$end - $start" | bc -l) $rss"
}

read -r t_small rss_small < <(measure "$dir/small.ndjson")
read -r t_big rss_big < <(measure "$dir/big.ndjson")
grep -q " 0 findings" "$dir/err" || { echo "unexpected findings:"; tail -5 "$dir/err"; exit 1; }
# Counted as the peer counts them: every line of the transcript is one event.
events=$(grep -c . "$dir/big.ndjson")
rate=$(echo "$events / $t_big" | bc)
echo "check haip: $events events in ${t_big}s on one core = ${rate} events/s"
echo "peak memory: ${rss_small} KiB at $small events, ${rss_big} KiB at $n events"

# The peer: ajv over the same transcript, on the same core.
(cd scripts/bench-check && [ -d node_modules/ajv ] || npm ci --silent --no-audit --no-fund)
start=$(date +%s.%N)
read -r peer_events peer_invalid < <(pin node scripts/bench-check/ajv-check.mjs \
  src/protocol/haip/envelope.schema.json "$dir/big.ndjson")
end=$(date +%s.%N)
t_peer=$(echo "$end - $start" | bc -l)
[ "$peer_invalid" = 0 ] || { echo "ajv found $peer_invalid invalid events"; exit 1; }
peer_rate=$(echo "$peer_events / $t_peer" | bc)
echo "ajv (schema only): $peer_events events in ${t_peer}s on one core = ${peer_rate} events/s"
echo "ratio wireprobe/ajv: $(echo "scale=2; $rate / $peer_rate" | bc)   (target: >= 5)"

# Every other protocol: the events wireprobe sends in one consistent sequence (`gen`), judged
# as from the side wireprobe plays (HUMA's agent is the Socket.IO client, so wireprobe is the
# server there; elsewhere wireprobe is the client).
for entry in huma:server nuum:client hpd:client uae:client agui:client; do
  protocol="${entry%%:*}" side="${entry##*:}"
  ./target/release/wireprobe gen "$protocol" --count "$small" --seed 1 2> "$dir/gen-err" \
    > "$dir/$protocol.ndjson" || { cat "$dir/gen-err"; exit 1; }
  start=$(date +%s.%N)
  # A finding makes check exit non-zero: the grep below says so with what it found.
  pin ./target/release/wireprobe check "$protocol" --from "$side" "$dir/$protocol.ndjson" \
    > /dev/null 2> "$dir/err" || true
  end=$(date +%s.%N)
  grep -q " 0 findings" "$dir/err" || { echo "unexpected findings in $protocol:"; tail -3 "$dir/err"; exit 1; }
  took=$(echo "$end - $start" | bc -l)
  bytes=$(wc -c < "$dir/$protocol.ndjson")
  printf 'check %s: %s events (%s MB) in %.3fs on one core = %s events/s\n' "$protocol" "$small" \
    "$((bytes / 1000000))" "$took" "$(echo "$small / $took" | bc)"
done
