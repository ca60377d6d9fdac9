#!/bin/bash -eu
# Builds wireprobe's cargo-fuzz targets the way OSS-Fuzz's Rust images do (`cargo fuzz build
# -O` in fuzz/, each target copied to $OUT), with each target's seed corpus zipped beside it
# ($OUT/TARGET_seed_corpus.zip) from the directories scripts/fuzz-seeds.sh names.
# The image sets SRC, OUT and SANITIZER (address, on nightly Rust). Run by hand on stable with
# SANITIZER=none (cargo fuzz -s none), as scripts/clusterfuzzlite-build.sh does to test it.
cd "$SRC/wireprobe"
sanitizer=()
if [ "${SANITIZER:-address}" = none ]; then
  sanitizer=(-s none)
fi
(cd fuzz && cargo fuzz build -O "${sanitizer[@]}")
triple=$(rustc -vV | sed -n 's/^host: //p')
built="fuzz/target/$triple/release"
for target in $(cd fuzz && cargo fuzz list); do
  cp "$built/$target" "$OUT/"
  # Its libFuzzer options (fuzz/options/README.md), where ClusterFuzzLite looks for them.
  if [ -f "fuzz/options/$target.options" ]; then
    cp "fuzz/options/$target.options" "$OUT/"
  fi
  # One flat directory, each file named after the directory it came from, so two seeds with
  # one name in different directories both go in.
  flat=$(mktemp -d)
  for dir in $(scripts/fuzz-seeds.sh "$target"); do
    for file in "$dir"/*; do
      if [ -f "$file" ]; then
        cp "$file" "$flat/${dir//\//_}_$(basename "$file")"
      fi
    done
  done
  rm -f "$OUT/${target}_seed_corpus.zip"
  if [ -n "$(ls -A "$flat")" ]; then
    (cd "$flat" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
  fi
  rm -rf "$flat"
done
