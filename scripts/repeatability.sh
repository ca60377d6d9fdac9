#!/usr/bin/env bash
# Runs each protocol's suite N times (default 20) against its builtin reference target and
# checks every run gives the same verdict for every case. HAIP runs against the variant that
# sends its HAI the moment the socket opens (the race that once made verdicts random); a Nuum
# agent always greets first with its init line. Prints one line per protocol and exits 1 when
# any run differs.
# Usage: scripts/repeatability.sh [RUNS] [PROTOCOL...]   (WIREPROBE=path picks the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
[ "$#" -gt 0 ] && shift
protocols=("$@")
[ ${#protocols[@]} -gt 0 ] || protocols=(haip nuum huma hpd uae)

bin=${WIREPROBE:-target/release/wireprobe}
[ -x "$bin" ] || cargo build --release --locked
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

status=0
for p in "${protocols[@]}"; do
  variant=()
  [ "$p" = haip ] && variant=(--variant hai-on-connect)
  for i in $(seq 1 "$runs"); do
    "$bin" run "$p" --target builtin "${variant[@]}" --report "json=$work/$p-$i.json" >/dev/null || true
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    print(c["id"], c["verdict"])
' "$work/$p-$i.json" > "$work/$p-$i.txt"
  done
  same=0
  for i in $(seq 1 "$runs"); do
    if cmp -s "$work/$p-1.txt" "$work/$p-$i.txt"; then
      same=$((same + 1))
    else
      echo "$p: run $i differs from run 1:"
      diff "$work/$p-1.txt" "$work/$p-$i.txt" | sed 's/^/    /' || true
      status=1
    fi
  done
  counts=$(awk '{print $2}' "$work/$p-1.txt" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
  echo "$p: $same/$runs runs identical (${counts%, })"
done
exit "$status"
