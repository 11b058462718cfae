// Scalar reference dot kernels: the oracle for the SIMD ones. Written for clarity, not
// speed: each block is decoded to plain integers first (independently of the SIMD unpacking
// tricks), the integer dot is exact, and blocks are combined in fp32 in block order, as
// ggml's scalar kernels do. Float formats multiply in fp32 and sum in double, like ggml's
// ggml_vec_dot_f32/f16 scalar paths.
#include <cstring>

#include "base/check.h"
#include "base/fp16.h"
#include "quant/block_types.h"
#include "quant/dequantize.h"
#include "quant/kernel_registry.h"
#include "quant/quant_internal.h"

namespace sf::quant {
namespace {

// ---- float formats

float to_float(float v) { return v; }
struct F16Bits {
  uint16_t bits;
};
struct BF16Bits {
  uint16_t bits;
};
float to_float(F16Bits v) { return fp16_to_fp32(v.bits); }
float to_float(BF16Bits v) { return bf16_to_fp32(v.bits); }

template <typename W, typename X>
float dot_float(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const W*>(wp);
  const auto* x = static_cast<const X*>(xp);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(to_float(w[i]) * to_float(x[i]));
  return static_cast<float>(sum);
}

// ---- legacy 32-element blocks: decode to integers, exact integer dot per block.

void decode(const BlockQ4_0& b, int* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = (b.qs[j] & 0xF) - 8;
    q[j + 16] = (b.qs[j] >> 4) - 8;
  }
}
void decode(const BlockQ4_1& b, int* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = b.qs[j] & 0xF;
    q[j + 16] = b.qs[j] >> 4;
  }
}
template <typename B>
void decode5(const B& b, int offset, int* q) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int j = 0; j < 16; ++j) {
    q[j] = ((b.qs[j] & 0xF) | (((qh >> j) & 1) << 4)) - offset;
    q[j + 16] = ((b.qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - offset;
  }
}
void decode(const BlockQ5_0& b, int* q) { decode5(b, 16, q); }
void decode(const BlockQ5_1& b, int* q) { decode5(b, 0, q); }
void decode(const BlockQ8_0& b, int* q) {
  for (int j = 0; j < 32; ++j) q[j] = b.qs[j];
}

template <typename XB>
int block_dot(const int* q, const XB& x) {
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += q[j] * x.qs[j];
  return sum;
}

// sum_b d_w d_x sum_j q_j x_j  (Q4_0, Q5_0, Q8_0 with Q8_0 activations)
template <typename WB>
float dot_symmetric(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const WB*>(wp);
  const auto* x = static_cast<const BlockQ8_0*>(xp);
  float sum = 0.0f;
  int q[32];
  for (int64_t i = 0; i < n / kQK; ++i) {
    decode(w[i], q);
    sum += block_dot(q, x[i]) * (fp16_to_fp32(w[i].d) * fp16_to_fp32(x[i].d));
  }
  return sum;
}

// With a weight offset m: sum_j (d_w q_j + m)(d_x x_j) = d_w d_x sum q x + m * s_x, where
// the Q8_1 block carries s_x = d_x * sum x.
template <typename WB>
float dot_with_min(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const WB*>(wp);
  const auto* x = static_cast<const BlockQ8_1*>(xp);
  float sum = 0.0f;
  int q[32];
  for (int64_t i = 0; i < n / kQK; ++i) {
    decode(w[i], q);
    sum += (fp16_to_fp32(w[i].d) * fp16_to_fp32(x[i].d)) * block_dot(q, x[i]) +
           fp16_to_fp32(w[i].m) * fp16_to_fp32(x[i].s);
  }
  return sum;
}

// ---- K-quants: decode a super-block to q[256], per-sub-block scale and min.

struct DecodedK {
  int q[kQK_K];
  int scale[16];
  int min[16];
  int sub_size;  // 16 or 32 elements per scale
};

void decode(const BlockQ2_K& b, DecodedK* k) {
  k->sub_size = 16;
  for (int j = 0; j < 16; ++j) {
    k->scale[j] = b.scales[j] & 0xF;
    k->min[j] = b.scales[j] >> 4;
  }
  for (int e = 0; e < kQK_K; ++e) {
    const int half = e / 128, group = (e % 128) / 32, l = e % 32;
    k->q[e] = (b.qs[32 * half + l] >> (2 * group)) & 3;
  }
}
void decode(const BlockQ3_K& b, DecodedK* k) {
  k->sub_size = 16;
  for (int j = 0; j < 16; ++j) {
    k->scale[j] = unpack_scale_q3_k(j, b.scales);
    k->min[j] = 0;
  }
  for (int e = 0; e < kQK_K; ++e) {
    const int half = e / 128, group = (e % 128) / 32, l = e % 32;
    const int low = (b.qs[32 * half + l] >> (2 * group)) & 3;
    const bool high = (b.hmask[l] >> (4 * half + group)) & 1;
    k->q[e] = low - (high ? 0 : 4);
  }
}
template <typename B>
void decode_k4_scales(const B& b, DecodedK* k) {
  k->sub_size = 32;
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    unpack_scale_min_k4(j, b.scales, &sc, &m);
    k->scale[j] = sc;
    k->min[j] = m;
  }
}
void decode(const BlockQ4_K& b, DecodedK* k) {
  decode_k4_scales(b, k);
  for (int e = 0; e < kQK_K; ++e) {
    const int group = e / 64, l = e % 32;
    const uint8_t byte = b.qs[32 * group + l];
    k->q[e] = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
  }
}
void decode(const BlockQ5_K& b, DecodedK* k) {
  decode_k4_scales(b, k);
  for (int e = 0; e < kQK_K; ++e) {
    const int group = e / 64, l = e % 32, sub = e / 32;
    const uint8_t byte = b.qs[32 * group + l];
    const int low = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
    k->q[e] = low | (((b.qh[l] >> sub) & 1) << 4);
  }
}
void decode(const BlockQ6_K& b, DecodedK* k) {
  k->sub_size = 16;
  for (int j = 0; j < 16; ++j) {
    k->scale[j] = b.scales[j];
    k->min[j] = 0;
  }
  for (int e = 0; e < kQK_K; ++e) {
    const int half = e / 128, group = (e % 128) / 32, l = e % 32;
    const uint8_t lbyte = b.ql[64 * half + 32 * (group & 1) + l];
    const int low = group < 2 ? (lbyte & 0xF) : (lbyte >> 4);
    const int high = (b.qh[32 * half + l] >> (2 * group)) & 3;
    k->q[e] = (low | (high << 4)) - 32;
  }
}

// d_x (d_w sum_j scale_j sum q x - dmin_w sum_j min_j sum x): the mins use Q8_K's bsums.
template <typename WB>
float dot_k(const void* wp, const void* xp, int64_t n) {
  const auto* w = static_cast<const WB*>(wp);
  const auto* x = static_cast<const BlockQ8_K*>(xp);
  float sum = 0.0f;
  DecodedK k;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    decode(w[i], &k);
    int isum = 0, imin = 0;
    for (int j = 0; j < kQK_K / k.sub_size; ++j) {
      int sub = 0;
      for (int l = j * k.sub_size; l < (j + 1) * k.sub_size; ++l) sub += k.q[l] * x[i].qs[l];
      isum += k.scale[j] * sub;
      int xsum = 0;
      for (int g = j * k.sub_size / 16; g < (j + 1) * k.sub_size / 16; ++g) xsum += x[i].bsums[g];
      imin += k.min[j] * xsum;
    }
    float dmin = 0.0f;
    if constexpr (requires { w[i].dmin; }) dmin = fp16_to_fp32(w[i].dmin);
    sum += x[i].d * fp16_to_fp32(w[i].d) * isum - x[i].d * dmin * imin;
  }
  return sum;
}

template <float (*Dot)(const void*, const void*, int64_t), int64_t kBlock>
float checked(const void* w, const void* x, int64_t n) {
  SF_CHECK(n % kBlock == 0, "dot of %lld elements: not whole blocks", static_cast<long long>(n));
  return Dot(w, x, n);
}

template <float (*Dot)(const void*, const void*, int64_t)>
void dot_rows_loop(const void* w, size_t stride, int64_t n_rows, const void* x, int64_t n, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) out[r] = Dot(static_cast<const uint8_t*>(w) + r * stride, x, n);
}

template <GgmlType T>
void quantize_as(const float* x, void* dst, int64_t n) {
  quantize_row(T, x, dst, n);
}

template <GgmlType W, GgmlType A, float (*Dot)(const void*, const void*, int64_t)>
constexpr DotKernel entry() {
  constexpr int64_t kBlock = A == GgmlType::Q8_K ? kQK_K : (A == GgmlType::Q8_0 || A == GgmlType::Q8_1) ? kQK : 1;
  return DotKernel{W, A, &quantize_as<A>, &checked<Dot, kBlock>, &dot_rows_loop<&checked<Dot, kBlock>>};
}

using G = GgmlType;
constexpr DotKernel kRefKernels[] = {
    entry<G::F32, G::F32, dot_float<float, float>>(),     entry<G::F16, G::F16, dot_float<F16Bits, F16Bits>>(),
    entry<G::F16, G::F32, dot_float<F16Bits, float>>(),   entry<G::BF16, G::BF16, dot_float<BF16Bits, BF16Bits>>(),
    entry<G::BF16, G::F32, dot_float<BF16Bits, float>>(), entry<G::Q4_0, G::Q8_0, dot_symmetric<BlockQ4_0>>(),
    entry<G::Q4_1, G::Q8_1, dot_with_min<BlockQ4_1>>(),   entry<G::Q5_0, G::Q8_0, dot_symmetric<BlockQ5_0>>(),
    entry<G::Q5_1, G::Q8_1, dot_with_min<BlockQ5_1>>(),   entry<G::Q8_0, G::Q8_0, dot_symmetric<BlockQ8_0>>(),
    entry<G::Q2_K, G::Q8_K, dot_k<BlockQ2_K>>(),          entry<G::Q3_K, G::Q8_K, dot_k<BlockQ3_K>>(),
    entry<G::Q4_K, G::Q8_K, dot_k<BlockQ4_K>>(),          entry<G::Q5_K, G::Q8_K, dot_k<BlockQ5_K>>(),
    entry<G::Q6_K, G::Q8_K, dot_k<BlockQ6_K>>(),
};

}  // namespace

KernelList ref_dot_kernels() { return {kRefKernels, std::size(kRefKernels)}; }

}  // namespace sf::quant
