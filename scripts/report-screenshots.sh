#!/usr/bin/env bash
# Regenerates the README's pictures of the HTML report and the matrix (reports/samples/*.png):
# the browser test (tests/it/html_report.rs) keeps its screenshots there. Needs chromium
# (scripts/install-chromium.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
WIREPROBE_REQUIRE_BROWSER=1 WIREPROBE_SCREENSHOT_DIR="$PWD/reports/samples" \
  cargo test --test it html_report::
ls -l reports/samples/*.png
