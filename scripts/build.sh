#!/usr/bin/env bash
# Installs dependencies, configures and builds specflash into build/ (Release).
# Warnings are errors when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECFLASH_WERROR=$werror >/dev/null
ninja -C build -j"$(nproc)"
