#!/usr/bin/env bash
# Installs Debian's chromium (headless, for tests/it/html_report.rs) when it is missing. Needs
# root or sudo; quiet unless it fails.
set -euo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-chromium: need root or sudo" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null
