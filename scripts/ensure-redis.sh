#!/usr/bin/env bash
# Make sure a Redis server answers on ${VMCP_REDIS_ADDR:-127.0.0.1:6379}:
# install redis-server from Debian's packages if missing, then start it.
set -euo pipefail
addr=${VMCP_REDIS_ADDR:-127.0.0.1:6379}
host=${addr%:*}; port=${addr##*:}
if ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-redis: installing redis-server"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq redis-server >/dev/null
fi
if redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1; then
  exit 0
fi
echo "ensure-redis: starting redis-server on $addr"
redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no >/dev/null
for _ in $(seq 50); do
  redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "ensure-redis: redis-server did not answer on $addr" >&2
exit 1
