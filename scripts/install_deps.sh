#!/usr/bin/env bash
# Installs the Debian packages specflash builds with (apt only; nothing else is downloaded).
# Skips apt entirely when everything is already installed.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config clang-format
          libhwy-dev liburing-dev libpcre2-dev nlohmann-json3-dev libcpp-httplib-dev
          libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
