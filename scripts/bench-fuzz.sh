#!/usr/bin/env bash
# Live fuzzing throughput against the HAIP reference target over loopback, beside the raw
# WebSocket echo rate measured in the same run (the ratio is the figure we track).
# Usage: scripts/bench-fuzz.sh [SECONDS] [JOBS]   (default 10 s, 32 concurrent connections)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example fuzz_bench
./target/release/examples/fuzz_bench "${1:-10}" "${2:-32}"
