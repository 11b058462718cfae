#!/usr/bin/env bash
# Runs the test suite (labels unit and model; pass --slow to include slow tests too).
# Needs ../shared beside the repository for the reference models and vectors.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -d ../shared ]]; then
  echo "error: ../shared (reference models, vocabularies, datasets) must sit beside the repository" >&2
  exit 1
fi
labels='unit|model'
[[ "${1:-}" == "--slow" ]] && labels='unit|model|slow'
ctest --test-dir build -L "$labels" --output-on-failure -j2 --timeout 600
