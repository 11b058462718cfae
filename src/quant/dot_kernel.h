// Dot products between a weight row (stored in its GGUF type) and an activation vector
// (quantised to the format the fast path consumes). This is the one interface the matmul
// in ops/ uses; everything type-specific lives behind it.
//
// Two implementations of every kernel: a scalar reference (the oracle, plain C++) and a
// SIMD one with runtime dispatch through Google Highway (AVX2/AVX-512/NEON/...). Tests
// compare them on odd sizes with per-type error bounds. All functions are thread-safe
// (stateless); the returned DotKernel pointers stay valid for the program's lifetime. A
// size that is not whole blocks aborts with SF_CHECK.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/ggml_type.h"

namespace sf {

struct DotKernel {
  GgmlType weight_type;
  GgmlType activation_type;  // the format x must be in before calling dot()
  // Quantise/convert n floats (n a multiple of the activation block size) into dst,
  // which holds row_bytes(activation_type, n) bytes.
  void (*quantize_activation)(const float* x, void* dst, int64_t n);
  // Dot product of one weight row with one activation row, n elements. Accumulates like
  // ggml: an exact integer dot per block, scaled by the block scales, summed in fp32.
  // Deterministic; depends only on (weight_row, activation, n).
  float (*dot)(const void* weight_row, const void* activation, int64_t n);
  // out[r] = dot(weight + r * row_stride, activation, n) for r < n_rows, bit for bit. The
  // legacy-format SIMD kernels work on four rows at once, sharing activation loads and
  // prefetching the next four rows (Q4_0/Q8_0: 10-30% faster than dot per row, from cache
  // or DRAM); the float ones sum the lanes of a block of rows together (small matrices), so
  // matvecs should prefer it. row_stride is in bytes.
  void (*dot_rows)(const void* weight, size_t row_stride, int64_t n_rows, const void* activation, int64_t n,
                   float* out);
};

// llama.cpp's choice of activation format for a weight type (its vec_dot_type):
// F32->F32, F16->F16, BF16->BF16, Q4_0/Q5_0/Q8_0->Q8_0, Q4_1/Q5_1->Q8_1, K-quants->Q8_K.
GgmlType default_activation_type(GgmlType weight_type);

// The fast kernel for a (weight, activation) pair; nullptr if the pair is unsupported.
// Supported pairs: every weight type with default_activation_type(weight), plus
// F16 x F32 and BF16 x F32 (full-precision activations).
const DotKernel* find_dot_kernel(GgmlType weight_type, GgmlType activation_type);
// The scalar reference for the same pair; nullptr if unsupported.
const DotKernel* find_dot_kernel_ref(GgmlType weight_type, GgmlType activation_type);

// For tests and benchmarks: the SIMD instruction sets compiled in and supported by this CPU
// (Highway target bits, best first), their names, and the kernel of a pair compiled for one
// of them (nullptr if unsupported). find_dot_kernel uses the first.
std::vector<int64_t> dot_kernel_targets();
std::string dot_kernel_target_name(int64_t target);
const DotKernel* find_dot_kernel_for_target(GgmlType weight_type, GgmlType activation_type, int64_t target);

}  // namespace sf
