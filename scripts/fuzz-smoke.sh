#!/usr/bin/env bash
# Builds the cargo-fuzz targets in fuzz/ on stable (`-s none`: coverage, no sanitizer) and runs
# each for SECS seconds (default 10) from the seeds in corpus/, printing executions per second.
# A crash fails the script and leaves the input in fuzz/artifacts/TARGET/.
#   scripts/fuzz-smoke.sh [SECS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-10}
shift || true
# cargo-fuzz lives in .tools/ inside the checkout, never in the user's ~/.cargo.
../scripts/install-cargo-fuzz.sh
export PATH="$PWD/../.tools/bin:$PATH"
cargo fuzz build -s none
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)

seeds_for() {
  ../scripts/fuzz-seeds.sh "$1" | sed 's|^|../|'
}

for target in "${targets[@]}"; do
  work=$(mktemp -d)
  log="$work/log"
  # shellcheck disable=SC2046 # the seed directories are separate words
  if ! cargo fuzz run -s none "$target" "$work" $(seeds_for "$target") -- \
      -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz-smoke: $target FAILED (input in fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  took=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log")
  echo "$target: $((runs / secs)) execs/s ($runs runs in ${secs} s, slowest unit ${took} s)"
  rm -rf "$work"
done
