#!/usr/bin/env bash
# Fails if any C++ source differs from clang-format's output (.clang-format: Google base).
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cc' '*.h')
[[ -z "$files" ]] && exit 0
bad=$(clang-format --dry-run $files 2>&1 | grep -c "warning:" || true)
if [[ "$bad" != "0" ]]; then
  clang-format --dry-run $files 2>&1 | grep "warning:" | cut -d: -f1 | sort -u >&2
  echo "error: the files above are not clang-formatted (run: clang-format -i \$(git ls-files '*.cc' '*.h'))" >&2
  exit 1
fi
echo "format check: $(echo "$files" | wc -w) files clean"
