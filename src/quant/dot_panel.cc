// The row-panel kernels (dot_panel.h) per Highway target: only AVX3_DL has them, for Q4_0,
// Q4_1, Q5_0, Q5_1 and Q8_0 (quant/vnni_row_panels-inl.h), Q4_K and Q5_K
// (vnni_row_panels_k-inl.h), Q2_K, Q3_K and Q6_K (vnni_row_panels_k16-inl.h); every other
// target returns none.
#include "quant/dot_panel.h"

#include "quant/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "quant/dot_panel.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "quant/vnni_row_panels-inl.h"
#include "quant/vnni_row_panels_k-inl.h"
#include "quant/vnni_row_panels_k16-inl.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // the kernels of vnni_*-inl.h inline only into VNNI code
#endif
namespace sf::quant::HWY_NAMESPACE {

DotTile GetPanelTile(GgmlType weight_type, GgmlType activation_type) {
#if HWY_TARGET == HWY_AVX3_DL
  if (weight_type == GgmlType::Q4_0 && activation_type == GgmlType::Q8_0)
    return DotTile{&VnniPanelRun<Q4_0PanelBlock>, &VnniActPreparedBytes, &VnniActPrepare, 1};
  if (weight_type == GgmlType::Q4_1 && activation_type == GgmlType::Q8_1)
    return DotTile{&VnniPanelRun<Q4_1PanelBlock>, &VnniActPreparedBytes, &VnniMinActPrepare, 1};
  if (weight_type == GgmlType::Q5_0 && activation_type == GgmlType::Q8_0)
    return DotTile{&VnniPanelRun<Q5_0PanelBlock>, &VnniActPreparedBytes, &VnniQ50ActPrepare, 1};
  if (weight_type == GgmlType::Q5_1 && activation_type == GgmlType::Q8_1)
    return DotTile{&VnniPanelRun<Q5_1PanelBlock>, &VnniActPreparedBytes, &VnniMinActPrepare, 1};
  if (weight_type == GgmlType::Q8_0 && activation_type == GgmlType::Q8_0)
    return DotTile{&VnniPanelRun<Q8_0PanelBlock>, &VnniActPreparedBytes, &VnniQ8ActPrepare, 1};
  if (weight_type == GgmlType::Q4_K && activation_type == GgmlType::Q8_K)
    return DotTile{&VnniK4PanelRun<Q4_KPanelBlock>, &VnniK4ActPreparedBytes, &VnniK4ActPrepare, 1};
  if (weight_type == GgmlType::Q2_K && activation_type == GgmlType::Q8_K)
    return DotTile{&VnniK16PanelRun<Q2_KPanelBlock>, &VnniK16ActPreparedBytes, &VnniK16ActPrepare, 1};
  if (weight_type == GgmlType::Q3_K && activation_type == GgmlType::Q8_K)
    return DotTile{&VnniK16PanelRun<Q3_KPanelBlock>, &VnniK16ActPreparedBytes, &VnniK16ActPrepare, 1};
  if (weight_type == GgmlType::Q5_K && activation_type == GgmlType::Q8_K)
    return DotTile{&VnniK4PanelRun<Q5_KPanelBlock>, &VnniK4ActPreparedBytes, &VnniK4ActPrepare, 1};
  if (weight_type == GgmlType::Q6_K && activation_type == GgmlType::Q8_K)
    return DotTile{&VnniK16PanelRun<Q6_KPanelBlock>, &VnniK16ActPreparedBytes, &VnniK16ActPrepare, 1};
#endif
  (void)weight_type;
  (void)activation_type;
  return DotTile{};
}

}  // namespace sf::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sf {
namespace quant {
HWY_EXPORT(GetPanelTile);
}  // namespace quant

DotTile find_panel_tile(GgmlType weight_type, GgmlType activation_type) {
  return find_panel_tile_for_target(weight_type, activation_type, 0);
}

DotTile find_panel_tile_for_target(GgmlType weight_type, GgmlType activation_type, int64_t target) {
  return quant::pick_target(quant::HWY_DISPATCH_TABLE(GetPanelTile), target)(weight_type, activation_type);
}

}  // namespace sf
#endif  // HWY_ONCE
