#!/usr/bin/env bash
# make lint-fresh: run make lint the way a fresh machine does, with empty
# Go module and build caches (GOMODCACHE and GOCACHE in a temporary
# directory, removed afterwards; GOFLAGS=-modcacherw so the module cache's
# files can be deleted). Proves that lint judges only the tools' findings,
# not the go command's "go: downloading ..." progress. Slow (every module
# is downloaded and every package, staticcheck's included, compiled and
# analysed from scratch: minutes), so it is not part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOMODCACHE="$tmp/mod" GOCACHE="$tmp/build" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
echo "lint-fresh: make lint with GOMODCACHE=$GOMODCACHE GOCACHE=$GOCACHE"
start=$(date +%s)
if "${MAKE:-make}" --no-print-directory lint; then
  echo "lint-fresh: make lint passed on empty caches in $(($(date +%s) - start)) s"
else
  echo "lint-fresh: make lint FAILED on empty caches after $(($(date +%s) - start)) s"
  exit 1
fi
