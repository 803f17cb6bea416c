#!/usr/bin/env bash
# Start the demo: the go-sdk everything-server over streamable HTTP on
# 127.0.0.1:$DEMO_BACKEND_PORT (default 9101; vmcp starts the stdio copy
# itself), then vmcp on examples/demo.yaml at $VMCP_LISTEN (default
# 127.0.0.1:8080). Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
listen=${VMCP_LISTEN:-127.0.0.1:8080}
port=${DEMO_BACKEND_PORT:-9101}
log=/tmp/vmcp-demo-backend-$port.log
# a server already on the port would answer the readiness probe below and be
# used silently (someone else's backend), and its log would be truncated
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "demo backend port 127.0.0.1:$port is busy (another make run?): set DEMO_BACKEND_PORT" >&2; exit 1
fi
./bin/everything-server -http "127.0.0.1:$port" -stateless=false >"$log" 2>&1 &
backend=$!
cfg=$(mktemp --suffix=.yaml)
trap 'kill $backend 2>/dev/null || true; rm -f "$cfg"' EXIT INT TERM
# the copy lives elsewhere: its relative stdio command becomes absolute
sed -e "s|127.0.0.1:9101|127.0.0.1:$port|" -e "s|command: \.\./bin/|command: $PWD/bin/|" examples/demo.yaml >"$cfg"
for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break
  kill -0 $backend 2>/dev/null || { echo "demo backend failed to start (port $port busy? set DEMO_BACKEND_PORT):" >&2; cat "$log" >&2; exit 1; }
  sleep 0.1
done
echo "vmcp: http://$listen/mcp  (readiness: http://$listen/readyz; demo backend log: $log)"
./bin/vmcp serve --config "$cfg" --listen "$listen"
