// Kernel lookup: merges the reference table and the per-target SIMD tables (see
// kernel_registry.h). Tables are built once, on first use, and never change afterwards, so
// lookups are thread-safe and the returned pointers stay valid for the program's lifetime.
#include "quant/dot_kernel.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "base/check.h"
#include "hwy/targets.h"
#include "quant/dequantize.h"
#include "quant/kernel_registry.h"

namespace sf {
namespace {

using quant::KernelList;

const DotKernel* find_in(const std::vector<DotKernel>& table, GgmlType w, GgmlType a) {
  for (const auto& k : table)
    if (k.weight_type == w && k.activation_type == a) return &k;
  return nullptr;
}

void quantize_f32(const float* x, void* dst, int64_t n) { quantize_row(GgmlType::F32, x, dst, n); }
void quantize_f16(const float* x, void* dst, int64_t n) { quantize_row(GgmlType::F16, x, dst, n); }
void quantize_bf16(const float* x, void* dst, int64_t n) { quantize_row(GgmlType::BF16, x, dst, n); }

// Activation conversions that stay scalar: they are O(n) per token against O(n * rows) for
// the dots, and the scalar path is bit-exact by construction.
quant::QuantizeFn scalar_activation_quantizer(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return &quantize_f32;
    case GgmlType::F16:
      return &quantize_f16;
    case GgmlType::BF16:
      return &quantize_bf16;
    default:
      return nullptr;
  }
}

// SIMD kernels for one target; pairs a SIMD file does not provide fall back to the reference.
std::vector<DotKernel> build_table(int64_t target) {
  std::vector<DotKernel> table;
  for (KernelList list :
       {quant::float_dot_kernels(target), quant::legacy_dot_kernels(target), quant::k_dot_kernels(target)}) {
    for (size_t i = 0; i < list.size; ++i) {
      DotKernel k = list.data[i];
      k.quantize_activation = quant::simd_activation_quantizer(k.activation_type, target);
      if (k.quantize_activation == nullptr) {
        k.quantize_activation = scalar_activation_quantizer(k.activation_type);
      }
      SF_CHECK(k.quantize_activation != nullptr, "no activation quantiser for %s", type_name(k.activation_type));
      table.push_back(k);
    }
  }
  const KernelList ref = quant::ref_dot_kernels();
  for (size_t i = 0; i < ref.size; ++i) {
    if (find_in(table, ref.data[i].weight_type, ref.data[i].activation_type) == nullptr) {
      table.push_back(ref.data[i]);
    }
  }
  return table;
}

const std::vector<DotKernel>& best_table() {
  static const std::vector<DotKernel> table = build_table(0);
  return table;
}

}  // namespace

GgmlType default_activation_type(GgmlType weight_type) {
  switch (weight_type) {
    case GgmlType::F32:
      return GgmlType::F32;
    case GgmlType::F16:
      return GgmlType::F16;
    case GgmlType::BF16:
      return GgmlType::BF16;
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::Q8_0:
      return GgmlType::Q8_0;
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
    case GgmlType::Q8_1:
      return GgmlType::Q8_1;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::Q8_K:
      return GgmlType::Q8_K;
  }
  SF_CHECK(false, "unknown type %u", static_cast<unsigned>(weight_type));
  return weight_type;
}

const DotKernel* find_dot_kernel(GgmlType weight_type, GgmlType activation_type) {
  return find_in(best_table(), weight_type, activation_type);
}

const DotKernel* find_dot_kernel_ref(GgmlType weight_type, GgmlType activation_type) {
  const KernelList ref = quant::ref_dot_kernels();
  for (size_t i = 0; i < ref.size; ++i) {
    if (ref.data[i].weight_type == weight_type && ref.data[i].activation_type == activation_type) {
      return &ref.data[i];
    }
  }
  return nullptr;
}

std::vector<int64_t> dot_kernel_targets() { return quant::compiled_simd_targets(); }

std::string dot_kernel_target_name(int64_t target) { return hwy::TargetName(target); }

const DotKernel* find_dot_kernel_for_target(GgmlType weight_type, GgmlType activation_type, int64_t target) {
  static std::mutex mu;
  static std::map<int64_t, std::unique_ptr<const std::vector<DotKernel>>> tables;
  std::lock_guard<std::mutex> lock(mu);
  const std::vector<int64_t> targets = dot_kernel_targets();
  SF_CHECK(std::find(targets.begin(), targets.end(), target) != targets.end(),
           "target %lld is not compiled in or not supported", static_cast<long long>(target));
  auto& table = tables[target];
  if (!table) table = std::make_unique<const std::vector<DotKernel>>(build_table(target));
  return find_in(*table, weight_type, activation_type);
}

}  // namespace sf
