#!/usr/bin/env bash
# Judges real AG-UI clients with wireprobe's client suite (`run agui --client`), each driven by
# a test mode written with its public API, as a user would:
#   http-agent      @ag-ui/client 1.0.0's HttpAgent (npm), tests/node/agui-client.mjs
#   ag-ui-client-rs the community Rust crate ag-ui-client 0.1.0 (crates.io),
#                   scripts/clients/ag-ui-client-rs/ (built under target/community-clients/)
# Only the install and build steps use the network (npm, crates.io). Each report goes to
# target/agui-clients/NAME.json; one line per client says its counts and failing rules.
# suites/agui/ERRATA.md classifies every non-pass ("Against the clients people run").
# Exit status: 0, or 1 when wireprobe itself errored (an exit status other than 0/1, or no
# report): the findings about the clients never change it.
#
# Usage: scripts/agui-clients.sh [NAME...]          (default: both)
# Env:   WIREPROBE   the binary (default: the newer of target/release and target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=target/agui-clients
mkdir -p "$out"

if [ -n "${WIREPROBE:-}" ]; then
  bin=$WIREPROBE
else
  bin=$( (ls -t target/release/wireprobe target/debug/wireprobe 2>/dev/null || true) | head -1)
  [ -n "$bin" ] || { echo "agui-clients: build wireprobe first (cargo build --release)" >&2; exit 1; }
fi
case "$bin" in /*) ;; *) bin=$root/$bin ;; esac

prepare() {
  case "$1" in
    http-agent)
      [ -d tests/node/node_modules/@ag-ui/client ] ||
        (cd tests/node && npm ci --no-audit --no-fund >/dev/null) || return 1
      echo "node tests/node/agui-client.mjs {url}" ;;
    ag-ui-client-rs)
      cargo build --quiet --release --manifest-path scripts/clients/ag-ui-client-rs/Cargo.toml \
        --target-dir target/community-clients >&2 || return 1
      echo "target/community-clients/release/ag-ui-client-test-mode {url}" ;;
    *) echo "agui-clients: no client named $1" >&2; return 1 ;;
  esac
}

status=0
for name in "${@:-http-agent ag-ui-client-rs}"; do
  for one in $name; do
    if ! exec_line=$(prepare "$one"); then
      printf '%-16s could not be prepared (see above)\n' "$one"
      continue
    fi
    report=$out/$one.json
    rm -f "$report"
    set +e
    "$bin" run agui --client --exec "$exec_line" --transcripts failing --report "json=$report" \
      >"$out/$one.txt" 2>&1
    code=$?
    set -e
    if [ "$code" -gt 1 ] || [ ! -s "$report" ]; then
      printf '%-16s wireprobe exited %s (see %s)\n' "$one" "$code" "$out/$one.txt"
      status=1
      continue
    fi
    python3 - "$one" "$report" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
report = json.load(open(path))
counts = {}
for case in report["cases"]:
    counts[case["verdict"]] = counts.get(case["verdict"], 0) + 1
rules = [r["id"] for r in report.get("rules", []) if r.get("verdict") in ("fail", "warn")]
shown = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
print(f"{name:<16} {shown}; rules not passed: {', '.join(rules) or 'none'}")
PY
  done
done
exit "$status"
