#!/usr/bin/env bash
# The soak of docs/robustness.md: the speculative + streamed generation soak (the slow test
# Soak.StreamedSpeculativeEqualsPlainAndRssStaysFlat, SPECFLASH_SOAK_TOKENS tokens) and two
# bounded server runs (scripts/soak_server.py). Needs a normal build in build/.
#   scripts/soak.sh [TOKENS] [REQUESTS]     # defaults 20000 and 1200 (one client, then three)
set -euo pipefail
cd "$(dirname "$0")/.."
export SPECFLASH_SOAK_TOKENS=${1:-20000}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); commit $(git rev-parse --short HEAD)"
build/test_robustness_slow --gtest_filter='Soak.*' | grep -E '^soak:|OK|FAILED'
python3 scripts/soak_server.py --requests "${2:-1200}"
python3 scripts/soak_server.py --requests "${2:-1200}" --clients 3
