#include "convert/row_encoder.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "base/check.h"
#include "quant/dequantize.h"

namespace sf {

void encode_rows(ThreadPool& pool, GgmlType type, int64_t cols, int64_t rows, const RowSource& fill, uint8_t* out) {
  const size_t stride = row_bytes(type, cols);  // SF_CHECKs the block multiple
  // Threads take blocks of rows from a shared counter rather than one fixed share each:
  // converting runs beside other work (builds, other conversions), and a descheduled
  // thread must not leave the rest waiting. Blocks of ~64K elements keep the counter
  // cheap; each row is still encoded independently, so the bytes do not depend on which
  // thread took it.
  const int64_t block = std::clamp<int64_t>((int64_t{1} << 16) / std::max<int64_t>(cols, 1), 1,
                                            std::max<int64_t>(1, rows / (4 * pool.size())));
  const int64_t n_blocks = (rows + block - 1) / block;
  std::atomic<int64_t> next_block{0};
  pool.parallel_for(std::min<int64_t>(pool.size(), n_blocks), [&](int64_t, int64_t, int) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t b = next_block.fetch_add(1); b < n_blocks; b = next_block.fetch_add(1)) {
      const int64_t end = std::min(rows, (b + 1) * block);
      for (int64_t r = b * block; r < end; ++r) {
        fill(r, row.data());
        quantize_row(type, row.data(), out + static_cast<size_t>(r) * stride, cols);
      }
    }
  });
}

}  // namespace sf
