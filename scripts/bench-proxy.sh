#!/usr/bin/env bash
# What `wireprobe proxy` adds on loopback, beside a direct connection in the same run: round-
# trip latency p50/p99 of one connection and the echo rate of many, HAIP envelopes judged.
# Usage: scripts/bench-proxy.sh [SECONDS] [JOBS] [ROUND_TRIPS]   (default 5 s, 32, 5000)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example proxy_bench
./target/release/examples/proxy_bench "${1:-5}" "${2:-32}" "${3:-5000}"
