#!/usr/bin/env bash
# make lint: gofmt, go vet, staticcheck and go mod tidy -diff; fails on any
# finding. staticcheck's SA1019 findings about the go-sdk's SEP-2577
# deprecations (roots, sampling, logging) are left out: vmcp exists to
# bridge those features for clients that still use them.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then echo "lint: gofmt would change:"; echo "$unformatted"; status=1; fi
go vet ./... || status=1
findings=$(go tool staticcheck ./... 2>&1 | grep -v 'SEP-2577' || true)
if [ -n "$findings" ]; then echo "lint: staticcheck:"; echo "$findings"; status=1; fi
go mod tidy -diff || { echo "lint: go.mod/go.sum are not tidy (run go mod tidy)"; status=1; }
[ "$status" = 0 ] && echo "lint: clean"
exit "$status"
