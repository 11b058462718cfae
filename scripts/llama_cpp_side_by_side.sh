#!/usr/bin/env bash
# specflash next to llama.cpp's llama-bench on the same GGUF files, same threads, one session
# (issue 12): pp128, pp512, tg64 and tg64 after a 2,048-token context, for Q4_0, Q4_K_M and
# Q8_0 versions of the synthetic TinyLlama-1.1B-shaped model. No llama.cpp code lives in
# this repository: point the script at a llama.cpp checkout and it builds llama-bench there.
#
#   scripts/llama_cpp_side_by_side.sh /path/to/llama.cpp     # builds <checkout>/build-specflash
#   LLAMA_BENCH=/path/to/llama-bench scripts/llama_cpp_side_by_side.sh   # an existing binary
#
# Environment: THREADS (2), REPS (5: timed runs per test, medians reported; both tools do
# one untimed warm-up first), TYPES ("Q4_0 Q4_K_M Q8_0"), OUT (bench-out/llama-cpp).
# Needs build/specflash (scripts/build.sh) and python3. Writes $OUT/side_by_side.md (the
# table, also on stdout) and every run's raw JSON next to it.
#
# Per model the two tools alternate test group by test group (llama.cpp's short tests,
# specflash's, then both at depth 2048), so load from other jobs falls on both alike.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
threads=${THREADS:-2}
reps=${REPS:-5}
types=${TYPES:-"Q4_0 Q4_K_M Q8_0"}
out=${OUT:-bench-out/llama-cpp}
sf=build/specflash

die() {
  echo "error: $*" >&2
  exit 1
}

# Paths the user gives are taken from the directory the script was started in; everything
# else (OUT, the models, build/specflash) from the repository root.
if [[ -n "${LLAMA_BENCH:-}" ]]; then
  [[ $# -eq 0 ]] || die "give either a llama.cpp checkout or LLAMA_BENCH, not both"
  [[ -f "$LLAMA_BENCH" && -x "$LLAMA_BENCH" ]] || die "LLAMA_BENCH=$LLAMA_BENCH is not an executable"
  bench_bin=$(realpath "$LLAMA_BENCH")
  cd "$repo"
else
  [[ $# -eq 1 ]] || die "usage: $0 LLAMA_CPP_CHECKOUT  (or LLAMA_BENCH=/path/to/llama-bench $0)"
  src=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
  cd "$repo"
  [[ -f "$src/CMakeLists.txt" && -d "$src/ggml" ]] || die "$src is not a llama.cpp checkout (no CMakeLists.txt and ggml/)"
  [[ -d "$src/tools/llama-bench" || -d "$src/examples/llama-bench" ]] || die "$src has no llama-bench sources"
  # CPU only, Release, tuned for this CPU (GGML_NATIVE), static so the binary does not pick
  # up another libllama; only the llama-bench target is built.
  mkdir -p "$out"
  cmake -S "$src" -B "$src/build-specflash" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF >"$out/llama-cmake.log" 2>&1 ||
    die "cmake failed: see $out/llama-cmake.log"
  ninja -C "$src/build-specflash" -j "${JOBS:-2}" llama-bench >&2
  bench_bin=$src/build-specflash/bin/llama-bench
  [[ -x "$bench_bin" ]] || die "the build did not produce $bench_bin"
fi
[[ -x "$sf" ]] || die "$sf is missing: build specflash first (scripts/build.sh)"
command -v python3 >/dev/null || die "python3 is needed to read the JSON results"
mkdir -p "$out"

# The 1.1B shape of bench_edgellm.sh (TinyLlama: 22 layers, 2048 wide, GQA 32/4), random
# weights from seed 1: llama.cpp reads specflash's synthetic GGUF like any other.
model_file() { echo "bench-out/llama1b-$(echo "$1" | tr 'A-Z' 'a-z').gguf"; }
for t in $types; do
  m=$(model_file "$t")
  [[ -f "$m" ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf --embd 2048 \
    --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --type "$t" --seed 1 -o "$m" >&2
done

# The two test groups, in the option spelling both tools share.
# The load average before and after goes into the table's header: other jobs on the
# machine slow both tools, and the reader should know how busy it was.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
short=(-p 128,512 -n 64)
deep=(-p 0 -n 64 -d 2048)
for t in $types; do
  m=$(model_file "$t")
  name=$(echo "$t" | tr 'A-Z' 'a-z')
  echo "== $t: $m" >&2
  for group in short deep; do
    if [[ $group == short ]]; then args=("${short[@]}"); else args=("${deep[@]}"); fi
    "$bench_bin" -m "$m" -t "$threads" -r "$reps" "${args[@]}" -o json >"$out/llama-$name-$group.json"
    $sf speed -m "$m" -t "$threads" -r "$reps" "${args[@]}" --json "$out/specflash-$name-$group.json" >&2
  done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out" "$reps" "$threads" "$load_before" "$load_after" $types >"$out/side_by_side.md" <<'EOF'
import json, statistics, sys
out, reps, threads, load_before, load_after, types = *sys.argv[1:6], sys.argv[6:]

def name(n_prompt, n_gen, n_depth):
    s = f"pp{n_prompt}" if n_prompt > 0 else f"tg{n_gen}"
    return s + (f" @ d{n_depth}" if n_depth > 0 else "")

rows, build = [], None
for t in types:
    low = t.lower()
    for group in ("short", "deep"):
        with open(f"{out}/llama-{low}-{group}.json") as f:
            llama = json.load(f)
        with open(f"{out}/specflash-{low}-{group}.json") as f:
            ours = {x["test"]: x["tokens_per_second"] for x in json.load(f)["tests"]}
        for x in llama:
            build = build or f'{x.get("build_commit", "?")} (build {x.get("build_number", "?")})'
            test = name(x["n_prompt"], x["n_gen"], x.get("n_depth", 0))
            sf = ours.get(test)
            if sf is None:
                sys.exit(f"specflash has no {test} for {t}")
            rows.append((t, test, x["samples_ts"], sf))
print(f"llama.cpp {build}; {threads} threads; median of {reps} runs per tool after one warm-up; "
      f"load average {load_before} before, {load_after} after\n")
print("| model | test | llama.cpp t/s | (min-max) | specflash t/s | (min-max) | specflash / llama.cpp |")
print("|---|---|---:|---:|---:|---:|---:|")
for t, test, ref, sf in rows:
    a, b = statistics.median(ref), statistics.median(sf)
    print(f"| {t} | {test} | {a:.2f} | {min(ref):.1f}-{max(ref):.1f} | {b:.2f} | {min(sf):.1f}-{max(sf):.1f} | {b / a:.2f}x |")
EOF
cat "$out/side_by_side.md"
