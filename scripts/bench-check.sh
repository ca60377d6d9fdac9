#!/usr/bin/env bash
# Measures `wireprobe check haip` on generated transcripts: events per second on one core
# with schema, rules and lifecycle on, and peak memory at two lengths (it must not grow).
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
grep -q "0 findings" "$dir/err" || { echo "unexpected findings:"; cat "$dir/err"; exit 1; }
rate=$(echo "$n / $t_big" | bc)
echo "check haip: $n events in ${t_big}s on one core = ${rate} events/s"
echo "peak memory: ${rss_small} KiB at $small events, ${rss_big} KiB at $n events"
