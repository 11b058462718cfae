#!/usr/bin/env bash
# Builds specflash with sanitizers in their own folders and runs the tests under them.
#
#   scripts/sanitize.sh asan   # ASan+UBSan+LSan (clang): build-fuzz, all unit + model tests,
#                              # then a served soak (leaks are reported at the server's exit)
#   scripts/sanitize.sh tsan   # TSan (clang): build-tsan, all unit + model tests, served soak
#   scripts/sanitize.sh tsan-quick  # TSan on the thread pool and the direct reader's I/O
#                                   # threads only: 10 files compiled directly (~2 min)
#   scripts/sanitize.sh all    # asan and tsan (default)
#
# Environment: JOBS (build parallelism, default 2), SPECFLASH_SHARED_DIR (the shared/
# folder for model tests), ASAN_DIR / TSAN_DIR (build folders), TSAN_TARGETS (binaries of
# the TSan run, default all test binaries), TSAN_TESTS / ASAN_TESTS (ctest -R regex), LABELS
# (ctest -L, default 'unit|model'), SOAK_REQUESTS (requests of the served soak, default 60).
# A sanitizer report fails the test that triggered it (halt_on_error / abort_on_error).
# Results: docs/robustness.md.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
JOBS=${JOBS:-2}
export SPECFLASH_SHARED_DIR=${SPECFLASH_SHARED_DIR:-$(cd .. && pwd)/shared}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)} CCACHE_NOHASHDIR=1
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

configure() {  # dir, cmake options...
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_COMPILER=clang "${launcher[@]}" "$@" > /dev/null
}

# Node's server tests drive build/specflash through the openai client; they are not part
# of the sanitizer runs (the server's C++ tests and a served soak are).
EXCLUDE='server_node_'

# The served soak under a sanitizer: `specflash serve` with 2 slots, tree speculation and
# every layer streamed, three concurrent clients (both slots busy and a queue), SSE and
# plain answers; a sanitizer report in the server's log, a leak report at its exit, or an
# answer different from plain decoding fails it (scripts/soak_server.py).
served_soak() {  # build dir
  python3 scripts/soak_server.py --bin "$1/specflash" --requests "${SOAK_REQUESTS:-60}" --max-tokens 48 \
    --clients 3 --sample-every 10 --no-rss-check 2>&1 | tee "$1/sanitize-soak.log" | tail -n 3
}

if [[ $what == asan || $what == all ]]; then
  # The fuzz build is the ASan+UBSan build (its coverage counters change nothing else):
  # one slow clang build serves the fuzz targets and this test run.
  dir=${ASAN_DIR:-build-fuzz}
  configure "$dir" -DSPECFLASH_FUZZ=ON -DSPECFLASH_BUILD_TESTS=ON
  ninja -C "$dir" -j"$JOBS"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
  ctest --test-dir "$dir" -L "${LABELS:-unit|model}" -R "${ASAN_TESTS:-.}" -E "$EXCLUDE" -j"$JOBS" --output-on-failure \
    --timeout 1800 | tee "$dir/sanitize-asan.log" | tail -n 30
  served_soak "$dir"
fi

if [[ $what == tsan || $what == all ]]; then
  dir=${TSAN_DIR:-build-tsan}
  configure "$dir" -DSPECFLASH_SANITIZE=thread
  # Every unit and model test binary: the threaded code is everywhere a forward pass is
  # (the thread pool), plus the direct reader's I/O threads and the streamer (weights),
  # sessions with several slots and the draft (engine, spec: EdgeLLM's BackgroundWorker,
  # ComputeGate and GatedLayerSource, Mirror-SD's rollouts), the server's slot pool and
  # connection threads (server), and the fault/thread-pool stress tests (robustness).
  # TSAN_TARGETS narrows it (e.g. "test_server_unit test_spec_model"); specflash is always
  # built, for the served soak.
  targets=(${TSAN_TARGETS:-$(ninja -C "$dir" -t targets all | grep -oE '^test_[a-z]+_(unit|model):' | tr -d : | sort -u)} specflash)
  ninja -C "$dir" -j"$JOBS" "${targets[@]}"
  # Suppressions: scripts/tsan.supp (each entry says why it is not a race of ours).
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp}
  # Binaries not built (TSAN_TARGETS) register a *_NOT_BUILT placeholder test: skipped.
  ctest --test-dir "$dir" -L "${LABELS:-unit|model}" -R "${TSAN_TESTS:-.}" -E "$EXCLUDE|_NOT_BUILT" -j"$JOBS" \
    --output-on-failure --timeout 1800 | tee "$dir/sanitize-tsan.log" | tail -n 30
  served_soak "$dir"
fi

if [[ $what == tsan-quick ]]; then
  # The two thread-owning pieces below the engine, without building the whole library:
  # ThreadPoolStress (tests/robustness) and the DirectReader tests (io_uring and pread
  # backends, concurrent submitters, destruction with reads in flight).
  out=build-tsan-quick
  mkdir -p "$out"
  clang++ -std=c++20 -O1 -g -fsanitize=thread -Isrc -Itests -DSPECFLASH_SHARED_DIR="\"$SPECFLASH_SHARED_DIR\"" \
    -DSPECFLASH_SOURCE_DIR="\"$PWD\"" -DSPECFLASH_BINARY_DIR="\"$PWD/$out\"" \
    src/base/thread_pool.cc src/base/log.cc src/weights/direct_reader.cc src/weights/read_queue.cc \
    src/weights/uring_read_backend.cc src/weights/pread_read_backend.cc src/weights/read_stepper.cc \
    tests/robustness/thread_pool_stress_test.cc tests/weights/direct_reader_test.cc tests/test_paths.cc \
    $(pkg-config --cflags --libs liburing) -lgtest -lgtest_main -lpthread -o "$out/tsan_quick"
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} "$out/tsan_quick" | tee "$out/sanitize-tsan-quick.log" \
    | grep -E '^\[  (PASSED|FAILED|SKIPPED) '
fi
