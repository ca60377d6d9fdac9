#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh outside its Docker image, with the variables the image sets
# (SRC holding the checkout as wireprobe/, OUT, WORK, SANITIZER; none here: stable Rust), then
# checks what it left in OUT: every cargo-fuzz target, runnable, with its seed corpus. The
# image itself cannot be built on this machine.   scripts/clusterfuzzlite-build.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-cargo-fuzz.sh
export PATH="$PWD/.tools/bin:$PATH"
src=$(mktemp -d)
ln -s "$PWD" "$src/wireprobe"
export SRC="$src" OUT="${1:-$(mktemp -d)}" WORK="$(mktemp -d)" SANITIZER=none \
  FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64
mkdir -p "$OUT"
bash .clusterfuzzlite/build.sh
for target in $(cd fuzz && cargo fuzz list); do
  [ -x "$OUT/$target" ] || { echo "clusterfuzzlite-build: $target missing from $OUT" >&2; exit 1; }
  "$OUT/$target" -runs=64 >/dev/null 2>&1 || { echo "clusterfuzzlite-build: $target does not run" >&2; exit 1; }
  if [ -f "fuzz/options/$target.options" ] && ! cmp -s "fuzz/options/$target.options" "$OUT/$target.options"; then
    echo "clusterfuzzlite-build: $target.options missing from $OUT" >&2; exit 1
  fi
  seeds=$(scripts/fuzz-seeds.sh "$target" | wc -l)
  if [ "$seeds" -gt 0 ]; then
    n=$(unzip -Z1 "$OUT/${target}_seed_corpus.zip" | wc -l)
    echo "$target: built, runs; seed corpus $n files"
  else
    echo "$target: built, runs; no seed corpus"
  fi
done
echo "clusterfuzzlite-build: $OUT"
