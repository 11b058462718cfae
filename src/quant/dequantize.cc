// dequantize_row/quantize_row: the per-type dispatch plus the float formats and the legacy
// 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1). K-quants live in *_k.cc.
//
// The quantisers reproduce llama.cpp's *_ref functions operation for operation, so a tensor
// quantised here has the same bytes as one written by llama-quantize (without an importance
// matrix). Fused multiply-add would change roundings, hence contraction is off in this file.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "quant/dequantize.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/quant_internal.h"

namespace sf {
namespace quant {
namespace {

int64_t num_blocks(int64_t n, int64_t block) {
  SF_CHECK(n % block == 0, "%lld elements is not a multiple of the block size %lld", static_cast<long long>(n),
           static_cast<long long>(block));
  return n / block;
}

// ---- float formats

void dequantize_row_f16(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}
void quantize_row_f16(const float* src, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}
void dequantize_row_bf16(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
}
void quantize_row_bf16(const float* src, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

// ---- symmetric 4/5-bit: the element of largest magnitude maps to -8 (-16) exactly, so its
// sign is kept and the other end of the range gets the spare level.

void quantize_row_q4_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_0*>(dst);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = x[j] * id;
      const float x1 = x[j + kQK / 2] * id;
      // Truncation after +8.5 is round-half-up; 16 (only from rounding) clamps to 15.
      const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f)));
      const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f)));
      y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void dequantize_row_q4_0(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(src);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = ((x[i].qs[j] & 0x0F) - 8) * d;
      y[j + kQK / 2] = ((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void quantize_row_q5_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_0*>(dst);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = x[j] * id;
      const float x1 = x[j + kQK / 2] * id;
      const int q0 = std::min(31, static_cast<int>(static_cast<int8_t>(x0 + 16.5f)));
      const int q1 = std::min(31, static_cast<int>(static_cast<int8_t>(x1 + 16.5f)));
      y[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + kQK / 2);
    }
    std::memcpy(y[i].qh, &qh, sizeof(qh));
  }
}

void dequantize_row_q5_0(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(src);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, sizeof(qh));
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1) << 4;
      y[j] = (((x[i].qs[j] & 0x0F) | h0) - 16) * d;
      y[j + kQK / 2] = (((x[i].qs[j] >> 4) | h1) - 16) * d;
    }
  }
}

// ---- asymmetric 4/5-bit: [min, max] mapped onto 0..15 (0..31).

void quantize_row_q4_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_1*>(dst);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < kQK; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 15;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    y[i].m = fp32_to_fp16(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = (x[j] - min) * id;
      const float x1 = (x[j + kQK / 2] - min) * id;
      const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 0.5f)));
      const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 0.5f)));
      y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void dequantize_row_q4_1(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(src);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    const float m = fp16_to_fp32(x[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = (x[i].qs[j] & 0x0F) * d + m;
      y[j + kQK / 2] = (x[i].qs[j] >> 4) * d + m;
    }
  }
}

void quantize_row_q5_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_1*>(dst);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < kQK; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 31;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    y[i].m = fp32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = (x[j] - min) * id;
      const float x1 = (x[j + kQK / 2] - min) * id;
      // llama.cpp does not clamp here; (max - min) * id rounds to at most 31.5.
      const int q0 = static_cast<uint8_t>(x0 + 0.5f);
      const int q1 = static_cast<uint8_t>(x1 + 0.5f);
      y[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + kQK / 2);
    }
    std::memcpy(y[i].qh, &qh, sizeof(qh));
  }
}

void dequantize_row_q5_1(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(src);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    const float m = fp16_to_fp32(x[i].m);
    uint32_t qh;
    std::memcpy(&qh, x[i].qh, sizeof(qh));
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1) << 4;
      y[j] = ((x[i].qs[j] & 0x0F) | h0) * d + m;
      y[j + kQK / 2] = ((x[i].qs[j] >> 4) | h1) * d + m;
    }
  }
}

// ---- 8-bit

void dequantize_row_q8_0(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(src);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = x[i].qs[j] * d;
  }
}

void dequantize_row_q8_1(const void* src, float* y, int64_t n) {
  const auto* x = static_cast<const BlockQ8_1*>(src);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = x[i].qs[j] * d;
  }
}

}  // namespace

// Shared with the SIMD activation quantiser, which must reproduce these bytes exactly:
// d = amax / 127, q = roundf(x / d) (ties away from zero).
void quantize_row_q8_0(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(dst);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void quantize_row_q8_1(const float* x, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_1*>(dst);
  const int64_t nb = num_blocks(n, kQK);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
      sum += y[i].qs[j];
    }
    y[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

}  // namespace quant

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
  using namespace quant;
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::F16:
      dequantize_row_f16(src, dst, n);
      return;
    case GgmlType::BF16:
      dequantize_row_bf16(src, dst, n);
      return;
    case GgmlType::Q4_0:
      dequantize_row_q4_0(src, dst, n);
      return;
    case GgmlType::Q4_1:
      dequantize_row_q4_1(src, dst, n);
      return;
    case GgmlType::Q5_0:
      dequantize_row_q5_0(src, dst, n);
      return;
    case GgmlType::Q5_1:
      dequantize_row_q5_1(src, dst, n);
      return;
    case GgmlType::Q8_0:
      dequantize_row_q8_0(src, dst, n);
      return;
    case GgmlType::Q8_1:
      dequantize_row_q8_1(src, dst, n);
      return;
    case GgmlType::Q2_K:
      dequantize_row_q2_k(src, dst, n);
      return;
    case GgmlType::Q3_K:
      dequantize_row_q3_k(src, dst, n);
      return;
    case GgmlType::Q4_K:
      dequantize_row_q4_k(src, dst, n);
      return;
    case GgmlType::Q5_K:
      dequantize_row_q5_k(src, dst, n);
      return;
    case GgmlType::Q6_K:
      dequantize_row_q6_k(src, dst, n);
      return;
    case GgmlType::Q8_K:
      dequantize_row_q8_k(src, dst, n);
      return;
  }
  SF_CHECK(false, "dequantize_row: unsupported type %u", static_cast<unsigned>(type));
}

void quantize_row(GgmlType type, const float* src, void* dst, int64_t n) {
  using namespace quant;
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::F16:
      quantize_row_f16(src, dst, n);
      return;
    case GgmlType::BF16:
      quantize_row_bf16(src, dst, n);
      return;
    case GgmlType::Q4_0:
      quantize_row_q4_0(src, dst, n);
      return;
    case GgmlType::Q4_1:
      quantize_row_q4_1(src, dst, n);
      return;
    case GgmlType::Q5_0:
      quantize_row_q5_0(src, dst, n);
      return;
    case GgmlType::Q5_1:
      quantize_row_q5_1(src, dst, n);
      return;
    case GgmlType::Q8_0:
      quantize_row_q8_0(src, dst, n);
      return;
    case GgmlType::Q8_1:
      quantize_row_q8_1(src, dst, n);
      return;
    case GgmlType::Q2_K:
      quantize_row_q2_k(src, dst, n);
      return;
    case GgmlType::Q3_K:
      quantize_row_q3_k(src, dst, n);
      return;
    case GgmlType::Q4_K:
      quantize_row_q4_k(src, dst, n);
      return;
    case GgmlType::Q5_K:
      quantize_row_q5_k(src, dst, n);
      return;
    case GgmlType::Q6_K:
      quantize_row_q6_k(src, dst, n);
      return;
    case GgmlType::Q8_K:
      quantize_row_q8_k(src, dst, n);
      return;
  }
  SF_CHECK(false, "quantize_row: unsupported type %u", static_cast<unsigned>(type));
}

}  // namespace sf
