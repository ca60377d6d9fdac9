#!/usr/bin/env bash
# Builds the cargo-fuzz targets in fuzz/ on stable (`-s none`: coverage, no sanitizer) and runs
# each for SECS seconds (default 10) from the seeds in corpus/, with its fuzz/options/TARGET.options,
# printing executions per second.
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

# The target's options/TARGET.options ([libfuzzer] key = value), as libFuzzer flags.
options_for() {
  local file="options/$1.options"
  [ -f "$file" ] || return 0
  sed -n 's/^ *\([a-z_]*\) *= *\([^ ]*\) *$/-\1=\2/p' "$file"
}

# The run's corpus is thrown away: kept in memory where a tmpfs exists, since creating a file
# for each new unit on a disk took up to a quarter of a checker target's time on this machine.
# (A tmpfs with less than 1 GiB free, as a container's default 64 MB is, could fill: /tmp then.)
scratch=/tmp
if [ -d /dev/shm ] && [ -w /dev/shm ] \
    && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge 1048576 ]; then
  scratch=/dev/shm
fi

for target in "${targets[@]}"; do
  work=$(mktemp -d -p "$scratch")
  log="$work/log"
  # shellcheck disable=SC2046 # the seed directories are separate words
  # shellcheck disable=SC2046 # each option is its own word
  if ! cargo fuzz run -s none "$target" "$work" $(seeds_for "$target") -- \
      $(options_for "$target") -max_total_time="$secs" -print_final_stats=1 \
      -rss_limit_mb=2048 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz-smoke: $target FAILED (input in fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  took=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log")
  echo "$target: $((runs / secs)) execs/s ($runs runs in ${secs} s, slowest unit ${took} s)$(options_for "$target" | sed 's/^/ /' | tr -d '\n')"
  rm -rf "$work"
done
