#!/usr/bin/env bash
# (Get the source with: git clone https://github.com/haiprotocol/haip && git -C haip checkout 9ae57a0.)
# Installs and builds the public HAIP v1 TypeScript SDK (@haip/sdk 1.0.1, haiprotocol/haip at
# 9ae57a0, directory haip-sdk/; later commits keep it under archive/v1/haip-sdk) in a source
# tree the caller already has. Fetches nothing from GitHub; npm reads the npm registry.
# Prints the absolute path of the built entry point (dist/index.js) on stdout, nothing else;
# npm's output and the versions go to stderr.
#   scripts/haip-sdk-client/setup.sh [SDK_DIR]      (default /tmp/haip-src/haip-sdk)
# Then run the driver with HAIP_SDK_DIR=SDK_DIR (see driver.js).
set -euo pipefail

sdk_dir=${1:-/tmp/haip-src/haip-sdk}
if [ $# -eq 0 ] && [ ! -d "$sdk_dir" ] && [ -d /tmp/haip-src/archive/v1/haip-sdk ]; then
  sdk_dir=/tmp/haip-src/archive/v1/haip-sdk
fi
if [ ! -f "$sdk_dir/package.json" ]; then
  echo "setup.sh: no package.json in $sdk_dir (pass the SDK's source directory as \$1)" >&2
  exit 1
fi
cd "$sdk_dir"
name=$(node -p 'require("./package.json").name')
if [ "$name" != "@haip/sdk" ]; then
  echo "setup.sh: $sdk_dir holds $name, not @haip/sdk" >&2
  exit 1
fi

# The lock file pins ws 8.18.3 and typescript 5.8.3; npm ci installs exactly that.
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund >&2
else
  npm install --no-audit --no-fund >&2
fi
npm run build >&2

entry="$PWD/$(node -p 'require("./package.json").main')"
if [ ! -f "$entry" ]; then
  echo "setup.sh: the build did not produce $entry" >&2
  exit 1
fi
node -e '
  const p = (m) => require(require.resolve(m + "/package.json", { paths: [process.cwd()] })).version;
  console.error(`setup.sh: @haip/sdk ${require("./package.json").version}, ws ${p("ws")}, ` +
    `typescript ${p("typescript")}, node ${process.version}`);
'
echo "$entry"
