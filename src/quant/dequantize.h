// Scalar reference conversion between floats and every block format. These are the
// oracle for the SIMD kernels and are used where speed does not matter (tools, tests,
// the embedding lookup of one row). Thread-safe (stateless). A broken precondition (n not
// a multiple of the block size, an unknown type) aborts with SF_CHECK.
#pragma once

#include <cstdint>

#include "quant/ggml_type.h"

namespace sf {

// dst[0..n) = decoded src. n must be a multiple of the block size. Every type in
// ggml_type.h is supported (including Q8_1/Q8_K).
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);

// Encode n floats into type's blocks (round-to-nearest schemes as llama.cpp's reference
// quantisers, without importance matrices). Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K. The bytes equal llama-quantize's
// for the same floats (tested for Q4_0, Q8_0, Q4_K and Q6_K against its output files).
// K-quants run llama.cpp's scale searches: ~20-160 ns per value (Q3_K..Q2_K; Q4_K ~100),
// so tools quantising whole models should spread rows over threads.
void quantize_row(GgmlType type, const float* src, void* dst, int64_t n);

}  // namespace sf
