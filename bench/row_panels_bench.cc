// row_panels_bench: matmul time of the same weights in GGUF's rows and in row panels
// (quant/row_panels.h), side by side in one process, for each batch size. The weights are
// 16 matrices of 5632 x 2048 (TinyLlama-1.1B's FFN shape), far more than the caches, so
// one-row batches stream them from DRAM as decode does. A benchmark, not a test: it never
// fails on time. Also the in-place conversions between the layouts (load time, and per read
// on CPUs without the kernel). Markdown table to stdout, one JSON object per line (prefix "json: ").
//
// usage: row_panels_bench [--threads N] [--repeats R] [--types Q4_0,Q8_0,Q4_K] [--rows-per-batch 1,2,4,...]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/thread_pool.h"
#include "base/timer.h"
#include "ops/matmul.h"
#include "quant/dequantize.h"

namespace {

using sf::GgmlType;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// n_mat copies' worth of distinct bytes: 64 random rows quantised, repeated over the matrix.
std::vector<sf::AlignedBuffer> make_weights(GgmlType type, int64_t rows, int64_t cols, int n_mat) {
  const size_t stride = sf::row_bytes(type, cols);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> row(static_cast<size_t>(cols));
  std::vector<sf::AlignedBuffer> out;
  for (int m = 0; m < n_mat; ++m) {
    out.emplace_back();
    out.back().allocate_huge(stride * static_cast<size_t>(rows));  // as resident weights are
    for (int64_t r = 0; r < rows; ++r) {
      if (r < 64) {
        for (auto& v : row) v = normal(rng);
        sf::quantize_row(type, row.data(), out.back().data() + r * stride, cols);
      } else {
        std::memcpy(out.back().data() + r * stride, out.back().data() + (r % 64) * stride, stride);
      }
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, repeats = 5;
  std::vector<std::string> types = {"Q4_0", "Q8_0", "Q4_K"};
  std::vector<int64_t> batches = {1, 2, 4, 8, 16, 64};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--threads") {
      threads = std::atoi(v.c_str());
    } else if (a == "--repeats") {
      repeats = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--types") {
      types = split(v);
    } else if (a == "--rows-per-batch") {
      batches.clear();
      for (const auto& b : split(v)) batches.push_back(std::max<int64_t>(1, std::atoll(b.c_str())));
    } else {
      std::fprintf(stderr, "error: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  constexpr int64_t kRows = 5632, kCols = 2048;
  constexpr int kMatrices = 16;
  sf::ThreadPool pool(threads);
  sf::MatmulScratch scratch;
  std::printf("matmul of %d matrices %lld x %lld, %d threads, best of %d; ms per matrix (GB/s of weights)\n\n",
              kMatrices, static_cast<long long>(kRows), static_cast<long long>(kCols), threads, repeats);
  std::printf("| type | rows per batch | GGUF rows ms | (GB/s) | row panels ms | (GB/s) | rows / panels |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  std::vector<std::string> json;
  struct Conversion {
    std::string type;
    double unpack_s, pack_s, bytes;
  };
  std::vector<Conversion> conversions;
  for (const std::string& name : types) {
    const auto type = sf::type_from_name(name);
    if (!type || !sf::has_row_panel_layout(*type)) {
      std::fprintf(stderr, "error: %s has no row-panel layout\n", name.c_str());
      return 2;
    }
    if (sf::preferred_layout(*type, kRows) != sf::WeightLayout::kRowPanels) {
      std::fprintf(stderr, "note: no %s panel kernel on this CPU (AVX512-VNNI); skipped\n", name.c_str());
      continue;
    }
    const size_t stride = sf::row_bytes(*type, kCols);
    std::vector<sf::AlignedBuffer> rows_bufs = make_weights(*type, kRows, kCols, kMatrices);
    std::vector<sf::AlignedBuffer> panel_bufs;
    std::vector<sf::WeightMatrix> as_rows, as_panels;
    for (auto& b : rows_bufs) {
      as_rows.push_back({*type, kCols, kRows, stride, b.data()});
      panel_bufs.emplace_back();
      panel_bufs.back().allocate_huge(b.size());
      std::memcpy(panel_bufs.back().data(), b.data(), b.size());
      sf::pack_row_panels(*type, panel_bufs.back().data(), kRows, kCols);
      as_panels.push_back({*type, kCols, kRows, stride, panel_bufs.back().data(), sf::WeightLayout::kRowPanels});
    }
    for (int64_t batch : batches) {
      std::mt19937 rng(3);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::vector<float> x(static_cast<size_t>(batch * kCols)), y(static_cast<size_t>(batch * kRows));
      for (auto& v : x) v = normal(rng);
      double best[2] = {1e30, 1e30};
      for (int rep = 0; rep < repeats + 1; ++rep) {   // the first round warms up
        for (int layout = 0; layout < 2; ++layout) {  // alternating, so load falls on both
          const auto& mats = layout == 0 ? as_rows : as_panels;
          sf::Stopwatch sw;
          for (const auto& w : mats) sf::matmul(w, x.data(), batch, kCols, y.data(), kRows, pool, scratch);
          if (rep > 0) best[layout] = std::min(best[layout], sw.elapsed() / kMatrices);
        }
      }
      const double bytes = static_cast<double>(stride) * kRows;
      std::printf("| %s | %lld | %.3f | %.1f | %.3f | %.1f | %.2fx |\n", name.c_str(), static_cast<long long>(batch),
                  best[0] * 1e3, bytes / best[0] / 1e9, best[1] * 1e3, bytes / best[1] / 1e9, best[0] / best[1]);
      char line[256];
      std::snprintf(line, sizeof(line),
                    "{\"bench\":\"row_panels\",\"type\":\"%s\",\"batch\":%lld,\"threads\":%d,\"rows_ms\":%.4f,"
                    "\"panels_ms\":%.4f}",
                    name.c_str(), static_cast<long long>(batch), threads, best[0] * 1e3, best[1] * 1e3);
      json.push_back(line);
    }
    // What a CPU without the panel kernel pays per streamed read of a `pack --row-panels`
    // file (LayerStreamer converts each such matrix back in its buffer; one thread), and
    // what the conversion at load costs: in place, the matrices from DRAM, best of repeats.
    double best_unpack = 1e30, best_pack = 1e30;
    for (int rep = 0; rep < repeats; ++rep) {
      sf::Stopwatch unpack_sw;
      for (auto& b : panel_bufs) sf::unpack_row_panels(*type, b.data(), kRows, kCols);
      best_unpack = std::min(best_unpack, unpack_sw.elapsed() / kMatrices);
      sf::Stopwatch pack_sw;
      for (auto& b : panel_bufs) sf::pack_row_panels(*type, b.data(), kRows, kCols);
      best_pack = std::min(best_pack, pack_sw.elapsed() / kMatrices);
    }
    const double bytes = static_cast<double>(stride) * kRows;
    conversions.push_back({name, best_unpack, best_pack, bytes});
  }
  std::printf("\nconversion in place, one thread, ms per matrix (GB/s):\n\n");
  std::printf("| type | panels -> rows ms | (GB/s) | rows -> panels ms | (GB/s) |\n|---|---:|---:|---:|---:|\n");
  for (const auto& c : conversions) {
    std::printf("| %s | %.3f | %.1f | %.3f | %.1f |\n", c.type.c_str(), c.unpack_s * 1e3, c.bytes / c.unpack_s / 1e9,
                c.pack_s * 1e3, c.bytes / c.pack_s / 1e9);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "{\"bench\":\"row_panel_conversion\",\"type\":\"%s\",\"unpack_ms\":%.4f,\"pack_ms\":%.4f}",
                  c.type.c_str(), c.unpack_s * 1e3, c.pack_s * 1e3);
    json.push_back(line);
  }
  std::printf("\n");
  for (const auto& j : json) std::printf("json: %s\n", j.c_str());
  return 0;
}
