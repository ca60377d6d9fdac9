#!/usr/bin/env bash
# Fuzzes every server fault of the reference targets (one campaign per fault, as
# tests/it/fuzz_live does: seed 1, --jobs 4, stopping at the first finding, twelve campaigns at
# once) and replays each finding with the command the campaign printed (`--strict`, so a
# `should` finding fails too). Prints a line per fault and the figures:
#
#   found       the campaign's finding names one of the rules the fault breaks
#   every time  it reproduced in every replay of its shrunk case (3/3), or among its company
#   replayed    the printed `run --suite` command failed on the rule (or, for a target that
#               ended after an adversarial input, by its ending)
#
# Usage: scripts/fault-replays.sh [PROTOCOL ...]   (default: haip nuum huma hpd agui uae)
# Faults a campaign cannot reach are listed in tests/it/fuzz_live.rs with why; they show here
# as "not found".
set -euo pipefail
cd "$(dirname "$0")/.."
# The debug build, as the tests run it.
cargo build --quiet
bin="$PWD/target/debug/wireprobe"
protocols=("${@:-haip nuum huma hpd agui uae}")
read -r -a protocols <<<"${protocols[*]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

jobs_file="$work/jobs"
for p in "${protocols[@]}"; do
  "$bin" list "$p" --faults | awk -v p="$p" '{print p "|" $1 "|" $3}' >>"$jobs_file"
done

# One fault: its campaign (for UAE, as the agent, then as the executor, until one finds it),
# then the printed replay.
one() {
  IFS='|' read -r p fault breaks <<<"$1"
  roles=("")
  [ "$p" = uae ] && roles=(agent executor)
  timeout_ms=2000
  case "$p" in nuum | uae) timeout_ms=4000 ;; esac
  rule="" out=""
  for role in "${roles[@]}"; do
    dir="$work/$p-$role-$fault"
    mkdir -p "$dir"
    role_flags=()
    [ -n "$role" ] && role_flags=(--role "$role")
    out=$("$bin" fuzz "$p" --target builtin --seed 1 "${role_flags[@]}" --fault "$fault" \
      --runs 100 --jobs 4 --timeout-ms "$timeout_ms" --shrink-secs 3 --max-findings 1 \
      --out "$dir" 2>/dev/null || true)
    rule=$(sed -n 's/^finding: \([A-Z0-9-]*\) .*/\1/p' <<<"$out" | head -1)
    [ -n "$rule" ] && tr ',' '\n' <<<"$breaks" | grep -qx "$rule" && break
  done
  name="$p${role:+/$role} $fault"
  if [ -z "$rule" ] || ! tr ',' '\n' <<<"$breaks" | grep -qx "$rule"; then
    echo "not found  $p $fault (breaks $breaks; found ${rule:-nothing})"
    return
  fi
  every=no
  if grep -q "reproduced 3/3$\|failed again as it ran" <<<"$out"; then every=yes; fi
  replay=$(sed -n 's/^  replay: wireprobe //p' <<<"$out" | head -1)
  replayed=no
  # The printed command, run as a user would (its words are shell-quoted where needed).
  # It fails on the rule; or, for a finding that the target ended after an adversarial input
  # (the keeps-working rule, which the campaign names for a target that ended), by the target
  # ending there.
  if ! eval "\"$bin\" $replay --strict" >"$dir/replay.out" 2>&1; then
    if grep -q "$rule" "$dir/replay.out"; then
      replayed=yes
    elif grep -q "^finding: $rule .*the target ended after an adversarial input" <<<"$out" &&
      grep -q "ended\|exited" "$dir/replay.out"; then
      replayed=yes
    fi
  fi
  echo "found      $name $rule every-time=$every replayed=$replayed"
}
export -f one
export bin work

sort -u "$jobs_file" | xargs -d '\n' -P 12 -I{} bash -c 'one "$@"' _ {} | sort | tee "$work/lines"
found=$(grep -c '^found' "$work/lines" || true)
every=$(grep -c 'every-time=yes' "$work/lines" || true)
replayed=$(grep -c 'replayed=yes' "$work/lines" || true)
total=$(sort -u "$jobs_file" | wc -l)
echo "faults: $total; found: $found; reproduced every time: $every; replayed by the printed command: $replayed"
