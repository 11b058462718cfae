#include "quant/row_panels.h"

#include <cstring>
#include <vector>

#include "base/check.h"
#include "quant/block_types.h"
#include "quant/row_panel_blocks.h"

namespace sf {

using quant::BlockQ4_0;
using quant::kQK;
using quant::Q4_0PanelBlock;

bool has_row_panel_layout(GgmlType type) { return type == GgmlType::Q4_0; }

void pack_row_panels(GgmlType type, uint8_t* data, int64_t rows, int64_t cols) {
  SF_CHECK(has_row_panel_layout(type), "no row-panel layout for %s", type_name(type));
  SF_CHECK(rows % kRowPanelRows == 0 && cols % kQK == 0, "row panels need rows %% 16 == 0, whole blocks");
  const int64_t nb = cols / kQK;
  const size_t panel_bytes = static_cast<size_t>(kRowPanelRows * nb) * sizeof(BlockQ4_0);
  // A panel replaces exactly its 16 rows' bytes, so one panel's copy is all the scratch.
  std::vector<BlockQ4_0> rows16(static_cast<size_t>(kRowPanelRows * nb));
  for (int64_t p = 0; p < rows / kRowPanelRows; ++p) {
    uint8_t* panel = data + static_cast<size_t>(p) * panel_bytes;
    std::memcpy(rows16.data(), panel, panel_bytes);
    auto* out = reinterpret_cast<Q4_0PanelBlock*>(panel);
    for (int64_t b = 0; b < nb; ++b) {
      Q4_0PanelBlock pb;
      for (int j = 0; j < kRowPanelRows; ++j) {
        const BlockQ4_0& src = rows16[static_cast<size_t>(j * nb + b)];
        pb.d[j] = src.d;
        for (int k = 0; k < 4; ++k) std::memcpy(&pb.qs[k][4 * j], src.qs + 4 * k, 4);
      }
      std::memcpy(&out[b], &pb, sizeof(pb));
    }
  }
}

void unpack_panel_row(GgmlType type, const uint8_t* data, int64_t r, int64_t cols, uint8_t* row_out) {
  SF_CHECK(has_row_panel_layout(type), "no row-panel layout for %s", type_name(type));
  const int64_t nb = cols / kQK;
  const size_t panel_bytes = static_cast<size_t>(kRowPanelRows * nb) * sizeof(BlockQ4_0);
  const auto* panel = data + static_cast<size_t>(r / kRowPanelRows) * panel_bytes;
  const int j = static_cast<int>(r % kRowPanelRows);
  for (int64_t b = 0; b < nb; ++b) {
    Q4_0PanelBlock pb;
    std::memcpy(&pb, panel + static_cast<size_t>(b) * sizeof(pb), sizeof(pb));
    BlockQ4_0 out;
    out.d = pb.d[j];
    for (int k = 0; k < 4; ++k) std::memcpy(out.qs + 4 * k, &pb.qs[k][4 * j], 4);
    std::memcpy(row_out + static_cast<size_t>(b) * sizeof(out), &out, sizeof(out));
  }
}

}  // namespace sf
