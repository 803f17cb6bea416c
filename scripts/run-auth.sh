#!/usr/bin/env bash
# make run-auth: the demo of scripts/run-demo.sh with an auth block. Starts
# the demo backend on 127.0.0.1:$DEMO_BACKEND_PORT (default 9101), the
# local OpenID Provider bin/vmcp-devidp on $DEVIDP_LISTEN (default
# 127.0.0.1:9400), then vmcp on $VMCP_LISTEN (default 127.0.0.1:8080) with
# auth.issuer = the provider and auth.audience = vmcp's URL, and prints the
# commands that get a token and call vmcp with it. Ctrl-C stops all three.
set -euo pipefail
cd "$(dirname "$0")/.."
listen=${VMCP_LISTEN:-127.0.0.1:8080}
port=${DEMO_BACKEND_PORT:-9101}
idp=${DEVIDP_LISTEN:-127.0.0.1:9400}
case $listen in :*) url=http://127.0.0.1$listen/mcp ;; *) url=http://$listen/mcp ;; esac
issuer=http://$idp
log=/tmp/vmcp-demo-backend-$port.log
idplog=/tmp/vmcp-devidp-${idp##*:}.log
# a server already on either port would answer the readiness probes below and
# be used silently (tokens from another provider fail with 401), and its log
# would be truncated
busy() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
if busy "127.0.0.1:$port"; then echo "demo backend port 127.0.0.1:$port is busy (another make run?): set DEMO_BACKEND_PORT" >&2; exit 1; fi
if busy "$idp"; then echo "provider address $idp is busy (another make run-auth?): set DEVIDP_LISTEN" >&2; exit 1; fi
./bin/everything-server -http "127.0.0.1:$port" -stateless=false >"$log" 2>&1 &
backend=$!
./bin/vmcp-devidp --listen "$idp" --audience "$url" >"$idplog" 2>&1 &
provider=$!
cfg=$(mktemp --suffix=.yaml)
trap 'kill $backend $provider 2>/dev/null || true; rm -f "$cfg"' EXIT INT TERM
# the copy lives elsewhere: its relative stdio command becomes absolute
sed -e "s|127.0.0.1:9101|127.0.0.1:$port|" -e "s|command: \.\./bin/|command: $PWD/bin/|" examples/demo.yaml >"$cfg"
printf 'auth:\n  issuer: %s\n  audience: %s\n  resource_name: vmcp-demo\n' "$issuer" "$url" >>"$cfg"
await() { # name pid log url hint
  for _ in $(seq 50); do
    curl -s -o /dev/null "$4" && return 0
    kill -0 "$2" 2>/dev/null || { echo "$1 failed to start ($5):" >&2; cat "$3" >&2; exit 1; }
    sleep 0.1
  done
  echo "$1 did not answer at $4" >&2; exit 1
}
await "demo backend" $backend "$log" "http://127.0.0.1:$port/mcp" "port $port busy? set DEMO_BACKEND_PORT"
await "vmcp-devidp" $provider "$idplog" "$issuer/.well-known/openid-configuration" "$idp busy? set DEVIDP_LISTEN"
# the Inspector's --header needs Node.js >= 22.19 (older Node gets 0.15,
# which fails "Arguments cannot be passed to a URL-based MCP server")
npx=npx
nodev=$(node --version 2>/dev/null || echo none)
if ! printf '%s\n' v22.19.0 "$nodev" | sort -V -C; then
  npx="PATH=$PWD/.cache/server-everything/node_modules/.bin:\$PATH npx"
  nodenote="(node is $nodev here; the Inspector needs 22.19 or later: make server-everything installs Node 22 there)
"
fi
cat <<MSG
vmcp: $url, auth by the local OpenID Provider $issuer (log: $idplog)
Clients alice and bob (secrets alice-secret, bob-secret) get tokens with sub alice and bob:

  TOKEN=\$(curl -s -u alice:alice-secret -d grant_type=client_credentials $issuer/oauth/token | sed -E 's/.*"access_token":"([^"]+)".*/\1/')
  curl -s $url -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  $npx -y @modelcontextprotocol/inspector --cli $url --method tools/list --header "Authorization: Bearer \$TOKEN"
  ${nodenote:-}
Without the header vmcp answers 401 with a WWW-Authenticate challenge.
MSG
./bin/vmcp serve --config "$cfg" --listen "$listen"
