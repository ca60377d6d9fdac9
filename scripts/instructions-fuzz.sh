#!/usr/bin/env bash
# Instructions per fuzzed event (fuzzer and reference target in one process), counted under
# valgrind's callgrind over a fixed campaign. Builds counted in one call repeat within 0.5%
# (time per event drifts by a fifth here), so builds a few percent apart can be told apart;
# the same build counted an hour later may differ by 5% (how often the runs find their
# sockets empty depends on scheduling), so compare only builds counted in the same call.
# callgrind counts a `rep stosb`/`rep movsb` once per byte: memset and memcpy weigh more
# here than in time.
# Usage: scripts/instructions-fuzz.sh [PROTOCOL] [RUNS] [BINARY...]
#   (default haip, 600 runs, ./target/release/wireprobe; more binaries: one line each)
set -euo pipefail
cd "$(dirname "$0")/.."
protocol="${1:-haip}" runs="${2:-600}"
shift 2 || shift $#
binaries=("$@")
if [ ${#binaries[@]} -eq 0 ]; then
  cargo build --release --quiet
  binaries=(./target/release/wireprobe)
fi
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
for binary in "${binaries[@]}"; do
  # A campaign that finds something exits non-zero; its count is still the figure.
  status=0
  log=$(valgrind --tool=callgrind --callgrind-out-file="$out_dir/cg.%p" "$binary" fuzz "$protocol" \
    --target builtin --runs "$runs" --seed 1 --jobs 32 --waiting 32 --max-len 50 2>&1) || status=$?
  events=$(grep -oE "[0-9]+ events in" <<<"$log" | grep -oE "^[0-9]+" || true)
  instructions=$(grep -oE "Collected : [0-9]+" <<<"$log" | grep -oE "[0-9]+$" || true)
  if [ -z "$events" ] || [ -z "$instructions" ]; then
    echo "$binary: the campaign did not finish:" >&2
    tail -5 <<<"$log" >&2
    exit 1
  fi
  found=""
  [ "$status" -eq 0 ] || found=", exit status $status: $(grep -v "^==" <<<"$log" | tail -3 | tr '\n' ' ')"
  echo "$binary: $((instructions / events)) instructions per fuzzed $protocol event ($events events, $runs runs$found)"
done
