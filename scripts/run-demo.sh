#!/usr/bin/env bash
# Start the demo: the go-sdk everything-server over streamable HTTP on
# 127.0.0.1:9101 (vmcp starts the stdio copy itself), then vmcp on
# examples/demo.yaml. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
./bin/everything-server -http 127.0.0.1:9101 -stateless=false >/tmp/vmcp-demo-backend.log 2>&1 &
backend=$!
trap 'kill $backend 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 50); do
  curl -s -o /dev/null http://127.0.0.1:9101/mcp && break
  sleep 0.1
done
echo "vmcp: http://127.0.0.1:8080/mcp  (readiness: http://127.0.0.1:8080/readyz)"
./bin/vmcp serve --config examples/demo.yaml
