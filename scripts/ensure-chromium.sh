#!/usr/bin/env bash
# Make sure headless Chromium (Debian's chromium package) is installed for
# the browser tests; prints its path. Tests find it as $VMCP_CHROMIUM or on PATH.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "ensure-chromium: installing chromium" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
command -v chromium
