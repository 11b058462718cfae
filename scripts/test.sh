#!/usr/bin/env bash
# Runs the test suite (labels unit and model; pass --slow to include slow tests too).
# The model tests need ../shared beside the repository (reference models and vectors);
# without it only the unit tests run, and those that read ../shared skip themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
labels='unit|model'
[[ "${1:-}" == "--slow" ]] && labels='unit|model|slow'
if [[ ! -d ../shared && -z "${SPECFLASH_SHARED_DIR:-}" ]]; then
  echo "note: ../shared (reference models, vocabularies, datasets) is not beside the repository;" \
       "running the unit tests only (those that need it are skipped)" >&2
  labels='unit'
fi
ctest --test-dir build -L "$labels" --output-on-failure -j2 --timeout 600
