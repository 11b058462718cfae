// Multi-row dot products: a tile of weight rows against a tile of activation rows, each
// weight block loaded and decoded once for every activation row of the tile instead of once
// per activation row. ops/matmul uses it when a batch has several rows (prefill, tree
// verification), where the decoding, not the memory traffic, is the cost.
//
// Bit-identical to DotKernel::dot of the same pair for every (weight row, activation row),
// so a batch verifying a token tree computes exactly the floats of decoding one token at a
// time: either by the same per-block integer dot, scale multiplies and accumulators (two
// round-robin ones for the legacy formats, one plus the mins for the K-quants) summed the
// same way, or, for the VNNI kernels (AVX3_DL: every legacy format and K-quant) and the
// float formats, by one per-element definition of the sum that both compute
// (quant/vnni_q-inl.h, vnni_k-inl.h, vnni_k16-inl.h, quant/dot_simd_float.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/ggml_type.h"

namespace sf {

// out[c * out_stride + r] = dot(weight + r * row_stride, act + c * act_stride, n) for
// r < n_rows, c < n_act. Strides of weight and act in bytes, of out in floats; n whole blocks.
using DotTileFn = void (*)(const void* weight, size_t row_stride, int64_t n_rows, const void* act, size_t act_stride,
                           int64_t n_act, int64_t n, float* out, int64_t out_stride);

// A tile kernel. Some read the activations in a layout of their own (the VNNI kernels put 16
// activation rows side by side in each vector): then `prepare` converts the n_act quantised
// rows once per matmul into prepared_bytes(n_act, n) bytes of scratch, and `run` is called
// on that buffer (any act_stride) instead of the rows. Without `prepare`, run reads the rows.
struct DotTile {
  DotTileFn run = nullptr;
  size_t (*prepared_bytes)(int64_t n_act, int64_t n) = nullptr;
  void (*prepare)(const void* act, size_t act_stride, int64_t n_act, int64_t n, void* prepared) = nullptr;
  // The batch size from which the tile is faster than dot_rows once per activation row
  // (both are bit-identical, so the choice is free).
  int64_t min_act_rows = 2;
  // For batches of 2 to min_act_rows - 1 rows, when set: a kernel that is faster there than
  // dot_rows once per activation row, on the quantised rows (no `prepare`), bit-identical
  // too. The VNNI K16 tiles have one (vnni_k16-inl.h).
  DotTileFn small_run = nullptr;

  explicit operator bool() const { return run != nullptr; }
};

// The tile kernel of a (weight, activation) pair on the best instruction set: Q4_0, Q5_0 and
// Q8_0 weights with Q8_0 activations, Q4_1 and Q5_1 with Q8_1 (dot_tile_q.cc), Q2_K..Q6_K
// with Q8_K (dot_tile_k.cc), and the float pairs of find_dot_kernel (dot_simd_float.cc);
// empty for other pairs and on the scalar target (callers fall back to dot_rows).
DotTile find_dot_tile(GgmlType weight_type, GgmlType activation_type);
// The same compiled for one target of dot_kernel_targets() (for tests).
DotTile find_dot_tile_for_target(GgmlType weight_type, GgmlType activation_type, int64_t target);

}  // namespace sf
