#!/usr/bin/env bash
# Installs the Debian packages specflash builds with (apt), and the test-only npm package
# the server tests drive it with (the official `openai` client, pinned by
# tests/server/package-lock.json, from the npm registry). Skips apt entirely when everything
# is already installed, and npm when tests/server/node_modules is up to date.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config clang-format
          libhwy-dev liburing-dev libpcre2-dev nlohmann-json3-dev libcpp-httplib-dev
          libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          python3-matplotlib)  # scripts/plot_bench.py: the benchmark report's plots
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm: check the commands, not the package names, because NodeSource's nodejs
# package ships npm itself and conflicts with Debian's npm package.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# The server tests' node dependencies, exactly as locked.
server_tests="$(dirname "$0")/../tests/server"
if [[ ! -f "$server_tests/node_modules/.package-lock.json" ||
      "$server_tests/package-lock.json" -nt "$server_tests/node_modules/.package-lock.json" ]]; then
  echo "installing the server tests' npm packages (openai client)" >&2
  # Without the registry the build still works; only the server tests then fail (they
  # cannot import 'openai'), which is the honest outcome.
  (cd "$server_tests" && npm ci --no-audit --no-fund --loglevel=error) ||
    echo "warning: npm ci failed in tests/server: the server tests will fail until it succeeds" >&2
fi
