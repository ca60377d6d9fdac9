#!/usr/bin/env bash
# A long run of `wireprobe proxy haip` in front of the HAIP reference server, reference client
# sessions through it on several jobs, paced to carry FRAMES frames in SECONDS (0: unpaced),
# the proxy's resident memory sampled as it goes; prints the sessions and frames judged and
# the RSS samples.
# Usage: scripts/soak-proxy.sh [SECONDS] [FRAMES] [JOBS]   (default 3600 s, 1000000, 4 jobs)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin wireprobe --example proxy_soak
./target/release/examples/proxy_soak ./target/release/wireprobe "${1:-3600}" "${2:-1000000}" "${3:-4}"
