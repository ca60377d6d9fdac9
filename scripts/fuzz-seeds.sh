#!/usr/bin/env bash
# The seed directories of a cargo-fuzz target, relative to the checkout's root, one per line:
# what scripts/fuzz-smoke.sh starts each target from and what .clusterfuzzlite/build.sh zips
# as its seed corpus.   scripts/fuzz-seeds.sh TARGET
set -euo pipefail
case "${1:?usage: fuzz-seeds.sh TARGET}" in
  check_haip | haip_frames | haip_fast_path) echo corpus/haip/valid corpus/haip/invalid ;;
  check_huma) echo corpus/huma/valid corpus/huma/invalid ;;
  check_nuum | nuum_input) echo corpus/nuum/valid corpus/nuum/invalid ;;
  check_hpd | hpd_sse) echo corpus/hpd/valid corpus/hpd/invalid ;;
  check_uae) echo corpus/uae/valid corpus/uae/invalid ;;
  check_agui | agui_frames) echo corpus/agui/valid corpus/agui/invalid ;;
  socketio_packet) echo fuzz/seeds/socketio_packet corpus/huma/valid ;;
  ndjson_framer) echo corpus/nuum/valid corpus/haip/valid ;;
  *) ;;
esac | tr ' ' '\n'
