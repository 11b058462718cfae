#include "quant/row_panels.h"

#include <cstring>
#include <vector>

#include "base/check.h"
#include "quant/block_types.h"
#include "quant/row_panel_blocks.h"

namespace sf {
namespace {

using quant::BlockQ2_K;
using quant::BlockQ3_K;
using quant::BlockQ4_0;
using quant::BlockQ4_1;
using quant::BlockQ4_K;
using quant::BlockQ5_0;
using quant::BlockQ5_1;
using quant::BlockQ5_K;
using quant::BlockQ6_K;
using quant::BlockQ8_0;
using quant::Q2_KPanelBlock;
using quant::Q3_KPanelBlock;
using quant::Q4_0PanelBlock;
using quant::Q4_1PanelBlock;
using quant::Q4_KPanelBlock;
using quant::Q5_0PanelBlock;
using quant::Q5_1PanelBlock;
using quant::Q5_KPanelBlock;
using quant::Q6_KPanelBlock;
using quant::Q8_0PanelBlock;

// Row j's `words` 32-bit words of src as bytes 4j..4j+3 of dst[0..words-1] (64 bytes each),
// and back.
void interleave_words(const uint8_t* src, uint8_t (*dst)[64], int words, int j) {
  for (int k = 0; k < words; ++k) std::memcpy(&dst[k][4 * j], src + 4 * k, 4);
}
void deinterleave_words(const uint8_t (*src)[64], uint8_t* dst, int words, int j) {
  for (int k = 0; k < words; ++k) std::memcpy(dst + 4 * k, &src[k][4 * j], 4);
}

// One format's block and panel block, and how row j moves between them.
struct Q4_0Panels {
  using Block = BlockQ4_0;
  using PanelBlock = Q4_0PanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    interleave_words(b.qs, p.qs, 4, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    deinterleave_words(p.qs, b.qs, 4, j);
  }
};
struct Q4_1Panels {
  using Block = BlockQ4_1;
  using PanelBlock = Q4_1PanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    p.m[j] = b.m;
    interleave_words(b.qs, p.qs, 4, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    b.m = p.m[j];
    deinterleave_words(p.qs, b.qs, 4, j);
  }
};
struct Q5_0Panels {
  using Block = BlockQ5_0;
  using PanelBlock = Q5_0PanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    std::memcpy(&p.qh[4 * j], b.qh, 4);
    interleave_words(b.qs, p.qs, 4, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    std::memcpy(b.qh, &p.qh[4 * j], 4);
    deinterleave_words(p.qs, b.qs, 4, j);
  }
};
struct Q5_1Panels {
  using Block = BlockQ5_1;
  using PanelBlock = Q5_1PanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    p.m[j] = b.m;
    std::memcpy(&p.qh[4 * j], b.qh, 4);
    interleave_words(b.qs, p.qs, 4, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    b.m = p.m[j];
    std::memcpy(b.qh, &p.qh[4 * j], 4);
    deinterleave_words(p.qs, b.qs, 4, j);
  }
};
struct Q8_0Panels {
  using Block = BlockQ8_0;
  using PanelBlock = Q8_0PanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    interleave_words(reinterpret_cast<const uint8_t*>(b.qs), p.qs, 8, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    deinterleave_words(p.qs, reinterpret_cast<uint8_t*>(b.qs), 8, j);
  }
};
struct Q4_KPanels {
  using Block = BlockQ4_K;
  using PanelBlock = Q4_KPanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    p.dmin[j] = b.dmin;
    interleave_words(b.scales, p.scales, 3, j);
    interleave_words(b.qs, p.qs, 32, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    b.dmin = p.dmin[j];
    deinterleave_words(p.scales, b.scales, 3, j);
    deinterleave_words(p.qs, b.qs, 32, j);
  }
};

struct Q2_KPanels {
  using Block = BlockQ2_K;
  using PanelBlock = Q2_KPanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    interleave_words(b.scales, p.scales, 4, j);
    interleave_words(b.qs, p.qs, 16, j);
    p.d[j] = b.d;
    p.dmin[j] = b.dmin;
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    deinterleave_words(p.scales, b.scales, 4, j);
    deinterleave_words(p.qs, b.qs, 16, j);
    b.d = p.d[j];
    b.dmin = p.dmin[j];
  }
};
struct Q3_KPanels {
  using Block = BlockQ3_K;
  using PanelBlock = Q3_KPanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    interleave_words(b.hmask, p.hmask, 8, j);
    interleave_words(b.qs, p.qs, 16, j);
    interleave_words(b.scales, p.scales, 3, j);
    p.d[j] = b.d;
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    deinterleave_words(p.hmask, b.hmask, 8, j);
    deinterleave_words(p.qs, b.qs, 16, j);
    deinterleave_words(p.scales, b.scales, 3, j);
    b.d = p.d[j];
  }
};
struct Q5_KPanels {
  using Block = BlockQ5_K;
  using PanelBlock = Q5_KPanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    p.d[j] = b.d;
    p.dmin[j] = b.dmin;
    interleave_words(b.scales, p.scales, 3, j);
    interleave_words(b.qh, p.qh, 8, j);
    interleave_words(b.qs, p.qs, 32, j);
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    b.d = p.d[j];
    b.dmin = p.dmin[j];
    deinterleave_words(p.scales, b.scales, 3, j);
    deinterleave_words(p.qh, b.qh, 8, j);
    deinterleave_words(p.qs, b.qs, 32, j);
  }
};
struct Q6_KPanels {
  using Block = BlockQ6_K;
  using PanelBlock = Q6_KPanelBlock;
  static void to_panel(const Block& b, PanelBlock& p, int j) {
    interleave_words(b.ql, p.ql, 32, j);
    interleave_words(b.qh, p.qh, 16, j);
    interleave_words(reinterpret_cast<const uint8_t*>(b.scales), p.scales, 4, j);
    p.d[j] = b.d;
  }
  static void from_panel(const PanelBlock& p, Block& b, int j) {
    deinterleave_words(p.ql, b.ql, 32, j);
    deinterleave_words(p.qh, b.qh, 16, j);
    deinterleave_words(p.scales, reinterpret_cast<uint8_t*>(b.scales), 4, j);
    b.d = p.d[j];
  }
};

template <class F>
void pack(uint8_t* data, int64_t rows, int64_t blocks_per_row) {
  using Block = typename F::Block;
  using PanelBlock = typename F::PanelBlock;
  const size_t panel_bytes = static_cast<size_t>(kRowPanelRows * blocks_per_row) * sizeof(Block);
  // A panel replaces exactly its 16 rows' bytes, so one panel's copy is all the scratch.
  std::vector<Block> rows16(static_cast<size_t>(kRowPanelRows * blocks_per_row));
  PanelBlock pb;
  for (int64_t p = 0; p < rows / kRowPanelRows; ++p) {
    uint8_t* panel = data + static_cast<size_t>(p) * panel_bytes;
    std::memcpy(rows16.data(), panel, panel_bytes);
    for (int64_t b = 0; b < blocks_per_row; ++b) {
      for (int j = 0; j < kRowPanelRows; ++j) F::to_panel(rows16[static_cast<size_t>(j * blocks_per_row + b)], pb, j);
      std::memcpy(panel + static_cast<size_t>(b) * sizeof(pb), &pb, sizeof(pb));
    }
  }
}

template <class F>
void unpack(uint8_t* data, int64_t rows, int64_t blocks_per_row) {
  using Block = typename F::Block;
  using PanelBlock = typename F::PanelBlock;
  const size_t panel_bytes = static_cast<size_t>(kRowPanelRows * blocks_per_row) * sizeof(Block);
  // As pack, mirrored: the panel's 16 rows are assembled in the scratch, then copied over it.
  std::vector<Block> rows16(static_cast<size_t>(kRowPanelRows * blocks_per_row));
  PanelBlock pb;
  for (int64_t p = 0; p < rows / kRowPanelRows; ++p) {
    uint8_t* panel = data + static_cast<size_t>(p) * panel_bytes;
    for (int64_t b = 0; b < blocks_per_row; ++b) {
      std::memcpy(&pb, panel + static_cast<size_t>(b) * sizeof(pb), sizeof(pb));
      for (int j = 0; j < kRowPanelRows; ++j) F::from_panel(pb, rows16[static_cast<size_t>(j * blocks_per_row + b)], j);
    }
    std::memcpy(panel, rows16.data(), panel_bytes);
  }
}

template <class F>
void unpack_row(const uint8_t* data, int64_t r, int64_t blocks_per_row, uint8_t* row_out) {
  using Block = typename F::Block;
  using PanelBlock = typename F::PanelBlock;
  const size_t panel_bytes = static_cast<size_t>(kRowPanelRows * blocks_per_row) * sizeof(Block);
  const uint8_t* panel = data + static_cast<size_t>(r / kRowPanelRows) * panel_bytes;
  const int j = static_cast<int>(r % kRowPanelRows);
  PanelBlock pb;
  Block out;
  for (int64_t b = 0; b < blocks_per_row; ++b) {
    std::memcpy(&pb, panel + static_cast<size_t>(b) * sizeof(pb), sizeof(pb));
    F::from_panel(pb, out, j);
    std::memcpy(row_out + static_cast<size_t>(b) * sizeof(out), &out, sizeof(out));
  }
}

}  // namespace

bool has_row_panel_layout(GgmlType type) {
  // Every block-quantised type; the float types have no per-block fields to interleave.
  switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return true;
    default:
      return false;
  }
}

namespace {

// Calls fn(F{}) with the format's panel traits.
template <class Fn>
void with_panel_format(GgmlType type, const Fn& fn) {
  switch (type) {
    case GgmlType::Q4_0:
      return fn(Q4_0Panels{});
    case GgmlType::Q4_1:
      return fn(Q4_1Panels{});
    case GgmlType::Q5_0:
      return fn(Q5_0Panels{});
    case GgmlType::Q5_1:
      return fn(Q5_1Panels{});
    case GgmlType::Q8_0:
      return fn(Q8_0Panels{});
    case GgmlType::Q2_K:
      return fn(Q2_KPanels{});
    case GgmlType::Q3_K:
      return fn(Q3_KPanels{});
    case GgmlType::Q4_K:
      return fn(Q4_KPanels{});
    case GgmlType::Q5_K:
      return fn(Q5_KPanels{});
    case GgmlType::Q6_K:
      return fn(Q6_KPanels{});
    default:
      SF_CHECK(false, "no row-panel layout for %s", type_name(type));
  }
}

}  // namespace

void pack_row_panels(GgmlType type, uint8_t* data, int64_t rows, int64_t cols) {
  SF_CHECK(rows % kRowPanelRows == 0 && cols % type_info(type).block_size == 0,
           "row panels need rows %% 16 == 0, whole blocks");
  with_panel_format(type, [&](auto f) { pack<decltype(f)>(data, rows, cols / type_info(type).block_size); });
}

void unpack_row_panels(GgmlType type, uint8_t* data, int64_t rows, int64_t cols) {
  SF_CHECK(rows % kRowPanelRows == 0 && cols % type_info(type).block_size == 0,
           "row panels need rows %% 16 == 0, whole blocks");
  with_panel_format(type, [&](auto f) { unpack<decltype(f)>(data, rows, cols / type_info(type).block_size); });
}

void unpack_panel_row(GgmlType type, const uint8_t* data, int64_t r, int64_t cols, uint8_t* row_out) {
  with_panel_format(type,
                    [&](auto f) { unpack_row<decltype(f)>(data, r, cols / type_info(type).block_size, row_out); });
}

}  // namespace sf
