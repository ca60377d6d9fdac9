#!/usr/bin/env bash
# Fuzzes every correct reference target for SECS seconds each (default 300) and prints how many
# runs and events each took: a finding here is a false alarm (or a reference bug) and fails the
# script, leaving the replayable case in reports/fuzz-soak/.
#   scripts/fuzz-soak.sh [SECS] [SEED] [PROTOCOL...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
seed=${2:-$(date +%s)}
shift 2 || shift $# || true
protocols=("$@")
[ ${#protocols[@]} -gt 0 ] || protocols=(haip huma nuum hpd)
bin=${WIREPROBE:-target/release/wireprobe}
[ -x "$bin" ] || cargo build --release --locked
status=0
for p in "${protocols[@]}"; do
  log=$(mktemp)
  if "$bin" fuzz "$p" --target builtin --seed "$seed" --duration "$secs" --jobs 4 \
      --out reports/fuzz-soak >"$log" 2>&1; then
    echo "$p: $(sed -n 's/^wireprobe: \([0-9]* runs.*\)/\1/p' "$log" | tail -1) — nothing found (seed $seed)"
  else
    echo "$p: FINDING with seed $seed:" >&2
    cat "$log" >&2
    status=1
  fi
  rm -f "$log"
done
exit $status
