#!/usr/bin/env bash
# Live fuzzing throughput against the reference targets over loopback, each beside the raw rate
# of its transport measured in the same run, before and after the fuzzer (the ratio to their mean
# is the figure we track; this machine's speed drifts between runs): HAIP beside a
# bare WebSocket echo, HPD beside a bare POST-and-stream loop over HTTP + SSE. Each protocol twice,
# each a process of its own (peer, fuzzer, peer): as `fuzz --jobs JOBS` runs by default, and with
# `--waiting JOBS` (runs waiting on the target's own timers lend their place to runs that work).
# The fuzzer runs its runs on a thread per core, each with a runtime of its own; the peer is also
# measured so arranged, and the ratio to that printed beside the tracked one. The fuzzer runs
# ROUNDS times between peer runs (peer, fuzzer, peer, ...), each round set against the peer runs
# either side of it: the rounds' median is the figure, with their range and how many reached 0.5.
# Usage: [ROUNDS=N] scripts/bench-fuzz.sh [SECONDS] [JOBS] [PROTOCOL...]
#        (default 3 rounds, 10 s, 32 jobs, haip hpd)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}" jobs="${2:-32}" rounds="${ROUNDS:-3}"
shift 2 || shift $#
protocols=("$@")
[ ${#protocols[@]} -gt 0 ] || protocols=(haip hpd)
cargo build --release --quiet --example fuzz_bench
for protocol in "${protocols[@]}"; do
  for waiting in 0 "$jobs"; do
    ./target/release/examples/fuzz_bench "$secs" "$jobs" "$protocol" "$waiting" "$rounds"
  done
done
