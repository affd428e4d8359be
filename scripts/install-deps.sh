#!/usr/bin/env bash
# Installs the Debian packages Cirrus needs when they are missing. Safe to run repeatedly.
set -euo pipefail
need=()
# curl and jq: the docs/web-services.md examples (scripts/web-services-check.py) run with them.
for pkg in libgeos-dev libedit-dev libsqlite3-dev zlib1g-dev curl jq; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
    echo "installing: ${need[*]}" >&2
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
