#!/usr/bin/env bash
# Installs what the project needs when it is missing: PostgreSQL's server and client library
# (libpq-dev), pkg-config, curl; with the argument `chromium`, also Debian's chromium (the HTML report
# check); with `wrk`, Debian's wrk (the HTTP service benchmark); with `node`, Debian's nodejs (the
# Node client of the live tail). Works as root (CI) and as a normal user with sudo.
set -euo pipefail

need=()
if [ "${1:-}" = "chromium" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  need+=(chromium)
fi
if [ "${1:-}" = "wrk" ] && ! command -v wrk >/dev/null 2>&1; then
  need+=(wrk)
fi
if [ "${1:-}" = "node" ] && ! command -v node >/dev/null 2>&1; then
  need+=(nodejs)
fi
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v curl >/dev/null 2>&1 || need+=(curl ca-certificates)   # the HTTP fault campaign
pkg-config --exists libpq 2>/dev/null || need+=(libpq-dev)
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi
if ! command -v swift >/dev/null 2>&1; then
  echo "error: swift is not on PATH; install a Swift 6 toolchain first" >&2
  exit 1
fi
[ ${#need[@]} -eq 0 ] && exit 0

echo "ensure-deps: installing ${need[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
  echo "error: need ${need[*]} but am not root and have no sudo; install them, or set LEDGER_DATABASE_URL" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# The postgresql package would start a system cluster on port 5432; the ledger runs its own private
# one on a Unix socket instead, so a policy-rc.d keeps the package from starting services.
if [ -z "$sudo" ] && [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
