#!/usr/bin/env bash
# What `wireprobe proxy` adds on loopback, beside a direct connection in the same run: round-
# trip latency p50/p99 of one connection; the echo rate (one message in flight) and the stream
# rate (16 in flight) of many connections, direct and proxied in turn, median of 3 rounds; a
# HAIP conversation judged. Usage: scripts/bench-proxy.sh [SECONDS] [JOBS] [ROUND_TRIPS]
# (default 3 s per measure, 32 connections, 5000 round trips)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example proxy_bench
./target/release/examples/proxy_bench "${1:-3}" "${2:-32}" "${3:-5000}"
