#!/usr/bin/env bash
# Builds specflash for 64-bit Arm (aarch64, Highway's NEON target) with Debian's cross
# compiler and runs the kernel and op tests under qemu-user, so the NEON paths are compiled
# and checked against the scalar references on this x86-64 machine.
#
#   bash scripts/arm_cross_check.sh            # quant + ops unit tests, then generation
#   TESTS="quant ops" MODEL_TESTS="model" bash scripts/arm_cross_check.sh
#                                              # also the llama.cpp agreement tests (../shared)
#   QEMU_CPU=max bash scripts/arm_cross_check.sh   # also SVE (specflash's kernels stay NEON)
#
# Then the Arm `specflash` generates from the embedded stories260K: plain decoding, and
# speculative decoding streamed at a 0% budget with the distilled draft, must give the same
# tokens (and the same as this machine's build/specflash when there is one).
#
# Not part of CI (about 15-20 minutes on two cores, most of it compiling); run it after
# touching quant/ or ops/. Packages (apt, arm64 multiarch): see the lists below.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build-arm64}"
tests="${TESTS:-quant ops}"
# cortex-a72: Armv8-A with NEON and no SVE, the baseline Arm phone/edge core the kernels
# are written for (qemu's default "max" CPU would also offer SVE to Highway's dispatch).
export QEMU_CPU="${QEMU_CPU:-cortex-a72}"

host_packages=(g++-aarch64-linux-gnu qemu-user cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev)
# libc6/libstdc++6 (arm64): the runtime the binaries load under qemu (see the toolchain file).
arm_packages=(libc6 libstdc++6 libhwy-dev libgtest-dev libgmock-dev liburing-dev libpcre2-dev libcpp-httplib-dev)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
for p in "${arm_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" || missing+=("$p:arm64")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPECFLASH_WERROR=$werror \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null
targets=()
for t in $tests; do targets+=("test_${t}_unit"); done
for t in ${MODEL_TESTS:-}; do targets+=("test_${t}_model"); done
ninja -C "$build_dir" -j"$(nproc)" "${targets[@]}" specflash
status=0
for t in "${targets[@]}"; do
  echo "== $t (qemu-aarch64, CPU $QEMU_CPU)"
  qemu-aarch64 "$build_dir/$t" --gtest_brief=1 || status=1
done

echo "== specflash run on stories260K (qemu-aarch64, CPU $QEMU_CPU)"
out_dir="$(mktemp -d)"
trap 'rm -rf "$out_dir"' EXIT
run=(run -m models/stories260K.gguf -p "Once upon a time" -n 48 --temp 0)
qemu-aarch64 "$build_dir/specflash" "${run[@]}" >"$out_dir/plain.txt" 2>/dev/null || status=1
qemu-aarch64 "$build_dir/specflash" "${run[@]}" --draft models/stories260K-draft.gguf --spec edgellm \
  --mem-budget 0% >"$out_dir/spec.txt" 2>/dev/null || status=1
cat "$out_dir/plain.txt"; echo
if ! cmp -s "$out_dir/plain.txt" "$out_dir/spec.txt"; then
  echo "FAILED: speculative decoding on Arm differs from plain decoding" >&2
  status=1
fi
if [[ -x build/specflash ]]; then
  build/specflash "${run[@]}" >"$out_dir/host.txt" 2>/dev/null
  if cmp -s "$out_dir/plain.txt" "$out_dir/host.txt"; then
    echo "same tokens as this machine's build/specflash"
  else
    echo "FAILED: the Arm build's tokens differ from build/specflash's" >&2
    status=1
  fi
fi
((status == 0)) && echo "arm cross check: all passed"
exit $status
