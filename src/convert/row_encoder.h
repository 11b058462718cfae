// Encodes a matrix row by row into any weight type, in parallel over rows. The rows come
// from a callback (dequantised source rows for `quantize`, generated values for `synth`),
// so no full f32 copy of a tensor is ever made. Each row is produced and encoded
// independently, so the bytes do not depend on the number of threads.
#pragma once

#include <cstdint>
#include <functional>

#include "base/thread_pool.h"
#include "quant/ggml_type.h"

namespace sf {

// fill(row, dst) writes row `row` as `cols` floats into dst. Called concurrently from
// pool threads with distinct rows; must be thread-safe.
using RowSource = std::function<void(int64_t row, float* dst)>;

// out receives rows * row_bytes(type, cols) bytes. cols must be a multiple of type's
// block size (SF_CHECKed; the tensor type policy guarantees it).
void encode_rows(ThreadPool& pool, GgmlType type, int64_t cols, int64_t rows, const RowSource& fill, uint8_t* out);

}  // namespace sf
