#!/usr/bin/env bash
# What a fuzz campaign finds, and how soon. For each protocol (and side), a campaign of fixed
# length against the reference target started with each of its faults, one at a time, stopping
# at the first finding; then against the unfaulted reference and each of its variants, where it
# must find nothing. Every campaign runs twice on the same machine in the same run: guided (the
# default: each run aims at a rule the mutators break, the rules in turn) and `--unguided`
# (every mutator drawn at random by weight, as campaigns did before guidance).
#
# Prints a line per protocol, side and mode:
#   found      faults whose campaign's finding names one of the rules the fault breaks / faults
#   median     the median time into the campaign's budget at which the run that found it ended
#   false      findings against the unfaulted reference and its variants (must be 0)
#   exercised  the rules of the judged side the unfaulted campaign exercised
# and, below, each fault a mode did not find.
#
# Usage: scripts/fuzz-power.sh [--duration SECS] [--side server|client|both] [PROTOCOL ...]
#   (default: --duration 60 --side both, protocols haip nuum huma hpd agui uae)
# FUZZ_POWER_PARALLEL campaigns run at once (default 6); FUZZ_POWER_LINES=FILE keeps a line per
# campaign (protocol|side|mode|kind|name|rule found|seconds|named|exercised). Faults a live exchange cannot reveal
# are listed, with why, in tests/it/fuzz_live/faults.rs (server) and clients.rs (client).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=60
sides=(server client)
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --side) case "$2" in both) sides=(server client) ;; *) sides=("$2") ;; esac; shift 2 ;;
    *) break ;;
  esac
done
protocols=("$@")
[ ${#protocols[@]} -eq 0 ] && protocols=(haip nuum huma hpd agui uae)
cargo build --quiet --no-default-features
bin="$PWD/target/debug/wireprobe"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One campaign: PROTOCOL|SIDE|MODE|KIND|NAME|BREAKS (KIND fault, variant or reference).
# Prints PROTOCOL|SIDE|MODE|KIND|NAME|RULE-FOUND|SECONDS|NAMED|EXERCISED.
one() {
  IFS='|' read -r p side mode kind name breaks <<<"$1"
  flags=(--target builtin --seed 1 --duration "$duration" --max-findings 1 --shrink-secs 0
    --jobs 4 --timeout-ms 4000)
  [ "$side" = client ] && flags+=(--client)
  [ "$mode" = unguided ] && flags+=(--unguided)
  case "$kind" in
    fault) flags+=(--fault "$name") ;;
    variant) flags+=(--variant "$name") ;;
  esac
  roles=("")
  [ "$p" = uae ] && [ "$side" = server ] && roles=(agent executor)
  rule="" after="" exercised="" named=no
  for role in "${roles[@]}"; do
    role_flags=()
    [ -n "$role" ] && role_flags=(--role "$role")
    dir="$work/$p-$side-$mode-$kind-$name-$role"
    mkdir -p "$dir"
    out=$("$bin" fuzz "$p" "${flags[@]}" "${role_flags[@]}" --out "$dir" 2>"$dir/stderr" || true)
    line=$(grep -m1 '^finding: ' <<<"$out" || true)
    rule=$(sed -n 's/^finding: \([A-Z0-9-]*\) .*/\1/p' <<<"$line")
    after=$(sed -n 's/.* (after \([0-9.]*\) s).*/\1/p' <<<"$line")
    [ -z "$exercised" ] && exercised=$(sed -n 's/^wireprobe: exercised \([0-9]* of [0-9]*\) .*/\1/p' "$dir/stderr")
    if [ "$kind" != fault ] && [ -n "$rule" ]; then
      break # a false finding: it stands, whichever role showed it
    fi
    if [ -n "$rule" ] && tr ',' '\n' <<<"$breaks" | grep -qx "$rule"; then
      named=yes
      break
    fi
  done
  echo "$p|$side|$mode|$kind|$name|${rule:--}|${after:--}|$named|${exercised:--}"
}
export -f one
export bin work duration

jobs_file="$work/jobs"
for p in "${protocols[@]}"; do
  for side in "${sides[@]}"; do
    client=()
    [ "$side" = client ] && client=(--client)
    for mode in guided unguided; do
      "$bin" list "$p" --faults "${client[@]}" |
        awk -v p="$p" -v s="$side" -v m="$mode" '{print p "|" s "|" m "|fault|" $1 "|" $3}' >>"$jobs_file"
      "$bin" list "$p" --variants "${client[@]}" |
        awk -v p="$p" -v s="$side" -v m="$mode" '{print p "|" s "|" m "|variant|" $1 "|"}' >>"$jobs_file"
      echo "$p|$side|$mode|reference|reference|" >>"$jobs_file"
    done
  done
done

xargs -d '\n' -P "${FUZZ_POWER_PARALLEL:-6}" -I{} bash -c 'one "$@"' _ {} <"$jobs_file" >"$work/lines"
[ -n "${FUZZ_POWER_LINES:-}" ] && cp "$work/lines" "$FUZZ_POWER_LINES"

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }
# The time by which nine in ten of the found faults were found, and the slowest.
p90_max() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "- -"; else print a[int((NR*9+9)/10)], a[NR]}'; }
echo "fuzz power: --duration $duration, seed 1, --jobs 4, $(nproc) cores"
for p in "${protocols[@]}"; do
  for side in "${sides[@]}"; do
    for mode in guided unguided; do
      rows=$(grep "^$p|$side|$mode|" "$work/lines" || true)
      [ -z "$rows" ] && continue
      faults=$(awk -F'|' '$4 == "fault"' <<<"$rows" | grep -c . || true)
      found=$(awk -F'|' '$4 == "fault" && $8 == "yes"' <<<"$rows" | grep -c . || true)
      med=$(awk -F'|' '$4 == "fault" && $8 == "yes" {print $7}' <<<"$rows" | median)
      read -r p90 slowest < <(awk -F'|' '$4 == "fault" && $8 == "yes" {print $7}' <<<"$rows" | p90_max)
      clean=$(awk -F'|' '$4 != "fault"' <<<"$rows" | grep -c . || true)
      false_found=$(awk -F'|' '$4 != "fault" && $6 != "-"' <<<"$rows" | grep -c . || true)
      exercised=$(awk -F'|' '$4 == "reference" {print $9}' <<<"$rows")
      printf '%-5s %-6s %-9s found %3s/%-3s median %5s s  90%% by %5s s  slowest %5s s  false %s (on %s clean targets)  exercised %s\n' \
        "$p" "$side" "$mode" "$found" "$faults" "$med" "$p90" "$slowest" "$false_found" "$clean" "$exercised"
    done
  done
done
echo
echo "not found (or a false finding):"
awk -F'|' '($4 == "fault" && $8 != "yes") || ($4 != "fault" && $6 != "-") {print "  " $1 " " $2 " " $3 " " $4 " " $5 ": found " $6}' "$work/lines" | sort
