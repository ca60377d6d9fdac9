#!/usr/bin/env bash
# Installs cargo-fuzz into .tools/ inside the checkout (not the user's ~/.cargo), once.
# Use it as `PATH="$PWD/.tools/bin:$PATH" cargo fuzz …` (scripts/fuzz-smoke.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD/.tools"
if [ ! -x "$root/bin/cargo-fuzz" ]; then
  cargo install cargo-fuzz --locked --version 0.13.2 --root "$root" --quiet
fi
