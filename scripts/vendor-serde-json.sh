#!/usr/bin/env bash
# Re-vendors serde_json VERSION into vendor/serde_json with wireprobe's one change: its Map
# hashes with foldhash in every build (vendor/README.md says why). Needs crates.io.
# Usage: scripts/vendor-serde-json.sh VERSION
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: scripts/vendor-serde-json.sh VERSION}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/probe/src"
echo 'fn main() {}' >"$tmp/probe/src/main.rs"
cat >"$tmp/probe/Cargo.toml" <<TOML
[package]
name = "probe"
version = "0.0.0"
edition = "2021"

[dependencies]
serde_json = "=$version"

[workspace]
TOML
(cd "$tmp/probe" && cargo vendor --quiet "$tmp/crates" >/dev/null)
from="$tmp/crates/serde_json"
rm -rf vendor/serde_json
mkdir -p vendor/serde_json
cp -r "$from"/{Cargo.toml,build.rs,src,LICENSE-APACHE,LICENSE-MIT,README.md} vendor/serde_json/
# Its tests are not shipped: drop their targets and the dev-dependencies they need.
python3 - vendor/serde_json/Cargo.toml <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
text = re.sub(r'\[\[test\]\]\nname = "[^"]+"\npath = "[^"]+"\n\n', "", text)
text = re.sub(r"\[dev-dependencies\.[^\]]+\]\n(?:[^\[\n][^\n]*\n)*\n?", "", text)
open(path, "w").write(text)
PY
# The change: foldhash whether or not `std` is on.
python3 - vendor/serde_json/src/map.rs <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = """#[cfg(all(feature = "preserve_order", feature = "std"))]
type BuildHasherImpl = std::collections::hash_map::RandomState;
#[cfg(all(feature = "preserve_order", not(feature = "std")))]
type BuildHasherImpl = foldhash::fast::RandomState;"""
new = """// wireprobe: foldhash with `std` too (vendor/README.md).
#[cfg(feature = "preserve_order")]
type BuildHasherImpl = foldhash::fast::RandomState;"""
old_doc = """//! In builds without the `std` feature, `preserve_order` hashes keys with
//! [`foldhash::fast::RandomState`]. Foldhash provides minimal HashDoS
//! resistance, but does not protect against interactive attackers. Builds with
//! `std` use the standard library's [`std::hash::RandomState`]."""
new_doc = """//! `preserve_order` hashes keys with [`foldhash::fast::RandomState`] (upstream
//! does so only in builds without `std`; wireprobe's copy does so in every
//! build, vendor/README.md). Foldhash provides minimal HashDoS resistance, but
//! does not protect against interactive attackers."""
if old not in text or old_doc not in text:
    sys.exit("serde_json's map.rs no longer chooses its hasher as 1.0.154 did: change it by hand")
open(path, "w").write(text.replace(old, new).replace(old_doc, new_doc))
PY
echo "vendor/serde_json is serde_json $version with foldhash; now: cargo update -p serde_json"
