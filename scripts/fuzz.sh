#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz, clang, ASan+UBSan) and runs them one at a time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   # default: 600 s each, every target in fuzz/
#
# Each run starts from build-fuzz/corpus/<target> (seeded by scripts/fuzz_seeds.py from the
# repository's models, shared/vocab and tiny synthesized models, plus the committed
# regression corpus tests/robustness/corpus/<target>), grows it, and writes any crashing,
# leaking or hanging input to build-fuzz/findings/<target>/. The last lines of each log
# (executions, coverage, corpus size) go to build-fuzz/fuzz-summary.txt. A finding is fixed,
# then copied into tests/robustness/corpus/<target>/ where the normal build's
# CorpusReplay test runs it forever after. Environment: JOBS (build), SPECFLASH_SHARED_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for f in fuzz/fuzz_*.cc; do targets+=("$(basename "$f" .cc | sed 's/^fuzz_//')"); done
fi
export SPECFLASH_SHARED_DIR=${SPECFLASH_SHARED_DIR:-$(cd .. && pwd)/shared}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)} CCACHE_NOHASHDIR=1
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_COMPILER=clang -DSPECFLASH_FUZZ=ON "${launcher[@]}" > /dev/null
ninja -C build-fuzz -j"${JOBS:-2}" $(printf 'fuzz_%s ' "${targets[@]}")

if [[ ! -d build-fuzz/seeds ]]; then
  [[ -x build/specflash ]] && synth=(--specflash build/specflash) || synth=()
  python3 scripts/fuzz_seeds.py build-fuzz/seeds --shared "$SPECFLASH_SHARED_DIR" "${synth[@]}"
fi
# One execution per input may take this long before it counts as a hang.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  findings=build-fuzz/findings/$t
  mkdir -p "$corpus" "$findings"
  log=build-fuzz/fuzz-$t.log
  echo "== fuzz_$t: ${seconds}s, log $log"
  status=0
  # max_len: the GGUF targets mutate whole (small) models; the text targets stay short.
  case $t in gguf_reader) max_len=150000 ;; draft_compat) max_len=700000 ;; *) max_len=8192 ;; esac
  build-fuzz/fuzz_"$t" "$corpus" build-fuzz/seeds/"$t" tests/robustness/corpus/"$t" \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$findings/" > "$log" 2>&1 || status=$?
  {
    echo "== fuzz_$t ($(date -u +%FT%TZ), ${seconds}s, commit $(git rev-parse --short HEAD), exit $status)"
    grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1
    grep -E '^stat::' "$log"
    ls "$findings"
  } | tee -a build-fuzz/fuzz-summary.txt
done
