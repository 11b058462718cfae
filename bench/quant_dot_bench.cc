// Dot-kernel throughput: one thread computes a rows x cols matrix-vector product (default
// 4096 x 4096) with each weight type's kernel and reports weight bytes streamed per second.
// Decode is bound by how fast weights stream, so GB/s of weight bytes per thread is the
// figure of merit; compare it with the machine's per-core memory bandwidth.
//
// Usage: quant_dot_bench [rows] [cols] [min_seconds] [--ref] [--all-targets] [--types=Q4_0,..]
//   --ref          also time the scalar reference kernels
//   --all-targets  time every SIMD instruction set the CPU supports, not just the best
//   --types=LIST   only these weight types (comma-separated)
// Prints a table, then one JSON object per line (prefix "json: ").
//
// quant_dot_bench --batch [--types=F32,..] [--cols=64,172] [--rows=64,128,256,512] [--acts=1,4,16]
//                 [--all-targets] [min_seconds]
//   Small matrices (default F32 at stories260K's K = 64 and 172) against 1, 4 and 16
//   activation rows, best target (or each), one thread, microseconds per call: "old" (float
//   types only: main's dot_rows before the batched lane sums, kept in
//   float_dot_rows_old-inl.h), "dot" (dot per row and activation row), "dot_rows" (once per
//   activation row) and "tile" (all activation rows in one call, as matmul does, including a
//   tile's activation layout if it has one) and "small" (the tile's kernel for batches under its
//   minimum, DotTile::small_run, where it has one). The variants are timed in turns, each keeping
//   its fastest sample; "speed-up" is old (or else dot_rows) over the best new variant.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/timer.h"
#include "quant/dequantize.h"
#include "quant/dot_kernel.h"
#include "quant/dot_tile.h"
#include "quant/simd_targets.h"  // the quant/ target list, for the old kernel's copy

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "float_dot_rows_old-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// (after the two above: included once more for the static target)
#include "float_dot_rows_old-inl.h"

namespace sf_bench {
HWY_EXPORT(OldFloatDotRows);
}  // namespace sf_bench

namespace {

using sf::GgmlType;

struct Result {
  std::string type, target, mode;
  double gbps, ms_per_matvec;
};

// Weight matrix: 64 distinct random rows, copied to fill all rows (quantising 16M values of
// a K-quant takes seconds; the copies stream from memory exactly like distinct rows).
sf::AlignedBuffer make_weights(GgmlType type, int64_t rows, int64_t cols) {
  const size_t row_bytes = sf::row_bytes(type, cols);
  sf::AlignedBuffer w(row_bytes * static_cast<size_t>(rows), 64);
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(static_cast<size_t>(cols));
  const int64_t distinct = std::min<int64_t>(64, rows);
  for (int64_t r = 0; r < distinct; ++r) {
    for (auto& v : x) v = normal(rng);
    sf::quantize_row(type, x.data(), w.data() + r * row_bytes, cols);
  }
  for (int64_t r = distinct; r < rows; ++r) {
    std::memcpy(w.data() + r * row_bytes, w.data() + (r % distinct) * row_bytes, row_bytes);
  }
  return w;
}

volatile float g_sink;

const GgmlType kTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                           GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                           GgmlType::F16,  GgmlType::BF16, GgmlType::F32};

// Times single matvecs until min_seconds have passed and returns the fastest, in seconds:
// on a shared machine the minimum is the run that had the core to itself.
double time_matvec(const sf::DotKernel& k, const sf::AlignedBuffer& w, size_t row_bytes, int64_t rows, const void* act,
                   int64_t cols, bool use_rows, double min_seconds) {
  std::vector<float> out(static_cast<size_t>(rows));
  auto matvec = [&] {
    if (use_rows) {
      k.dot_rows(w.data(), row_bytes, rows, act, cols, out.data());
    } else {
      for (int64_t r = 0; r < rows; ++r) out[r] = k.dot(w.data() + r * row_bytes, act, cols);
    }
    g_sink = out[static_cast<size_t>(rows) - 1];
  };
  matvec();  // warm up
  double best = 1e30;
  sf::Stopwatch total;
  int iters = 0;
  while (total.elapsed() < min_seconds || iters < 3) {
    sf::Stopwatch sw;
    matvec();
    best = std::min(best, sw.elapsed());
    ++iters;
  }
  return best;
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at < s.size()) {
    const size_t comma = s.find(',', at);
    out.push_back(std::stoll(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// Seconds per call of fn, from one burst of calls lasting at least a millisecond.
template <class Fn>
double time_burst(const Fn& fn) {
  int reps = 1;
  for (;;) {
    sf::Stopwatch sw;
    for (int i = 0; i < reps; ++i) fn();
    const double t = sw.elapsed();
    if (t > 1e-3) return t / reps;
    reps *= 2;
  }
}

int batch(int argc, char** argv) {
  std::vector<GgmlType> types = {GgmlType::F32};
  std::vector<int64_t> cols_list = {64, 172}, rows_list = {64, 128, 256, 512}, acts_list = {1, 4, 16};
  double min_seconds = 0.3;
  bool all_targets = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batch") continue;
    if (arg == "--all-targets") {
      all_targets = true;
    } else if (arg.rfind("--types=", 0) == 0) {
      types.clear();
      const std::string list = "," + arg.substr(8) + ",";
      for (GgmlType t : kTypes) {
        if (list.find("," + std::string(sf::type_name(t)) + ",") != std::string::npos) types.push_back(t);
      }
    } else if (arg.rfind("--cols=", 0) == 0) {
      cols_list = parse_list(arg.substr(7));
    } else if (arg.rfind("--rows=", 0) == 0) {
      rows_list = parse_list(arg.substr(7));
    } else if (arg.rfind("--acts=", 0) == 0) {
      acts_list = parse_list(arg.substr(7));
    } else {
      min_seconds = std::stod(arg);
    }
  }
  std::vector<int64_t> targets = sf::dot_kernel_targets();
  if (!all_targets) targets.resize(1);
  std::printf("matrices x activation rows, one thread, us per call (fastest burst)\n");
  std::printf("%-5s %-8s %5s %5s %5s %9s %9s %9s %9s %9s %9s %9s\n", "type", "target", "K", "rows", "acts", "old",
              "dot", "dot_rows", "tile", "small", "speed-up", "ns/out");
  std::vector<std::string> json;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : types) {
    const int old_index = type == GgmlType::F32 ? 0 : type == GgmlType::F16 ? 1 : type == GgmlType::BF16 ? 2 : -1;
    const GgmlType act_type = sf::default_activation_type(type);
    for (int64_t t : targets) {
      const std::string target = sf::dot_kernel_target_name(t);
      if (target == "SCALAR") continue;  // the reference: no old copy, no tiles
      const sf::DotKernel* k = sf::find_dot_kernel_for_target(type, act_type, t);
      const sf::DotTile tile = sf::find_dot_tile_for_target(type, act_type, t);
      const auto old_dot_rows = sf::quant::pick_target(HWY_DISPATCH_TABLE(sf_bench::OldFloatDotRows), t);
      for (int64_t cols : cols_list) {
        for (int64_t rows : rows_list) {
          const size_t row_bytes = sf::row_bytes(type, cols), act_bytes = sf::row_bytes(act_type, cols);
          const sf::AlignedBuffer w = make_weights(type, rows, cols);
          for (int64_t acts : acts_list) {
            sf::AlignedBuffer x(act_bytes * static_cast<size_t>(acts), 64);
            std::vector<float> xf(static_cast<size_t>(cols));
            for (int64_t a = 0; a < acts; ++a) {
              for (auto& v : xf) v = normal(rng);
              k->quantize_activation(xf.data(), x.data() + a * act_bytes, cols);
            }
            std::vector<float> out(static_cast<size_t>(rows * acts));
            const auto old = [&] {
              for (int64_t a = 0; a < acts; ++a) {
                old_dot_rows(old_index, w.data(), row_bytes, rows, x.data() + a * act_bytes, cols,
                             out.data() + a * rows);
              }
              g_sink = out[0];
            };
            const auto dot = [&] {
              for (int64_t a = 0; a < acts; ++a) {
                for (int64_t r = 0; r < rows; ++r)
                  out[a * rows + r] = k->dot(w.data() + r * row_bytes, x.data() + a * act_bytes, cols);
              }
              g_sink = out[0];
            };
            const auto dot_rows = [&] {
              for (int64_t a = 0; a < acts; ++a)
                k->dot_rows(w.data(), row_bytes, rows, x.data() + a * act_bytes, cols, out.data() + a * rows);
              g_sink = out[0];
            };
            std::vector<uint8_t> prepared(tile.prepare ? tile.prepared_bytes(acts, cols) : 0);
            const auto run_tile = [&] {
              const uint8_t* tile_x = x.data();
              if (tile.prepare) {
                tile.prepare(x.data(), act_bytes, acts, cols, prepared.data());
                tile_x = prepared.data();
              }
              tile.run(w.data(), row_bytes, rows, tile_x, act_bytes, acts, cols, out.data(), rows);
              g_sink = out[0];
            };
            // The tile's kernel for batches under its min_act_rows (DotTile::small_run).
            const auto run_small = [&] {
              tile.small_run(w.data(), row_bytes, rows, x.data(), act_bytes, acts, cols, out.data(), rows);
              g_sink = out[0];
            };
            double t_old = 1e30, t_dot = 1e30, t_rows = 1e30, t_tile = 1e30, t_small = 1e30;
            sf::Stopwatch total;
            while (total.elapsed() < min_seconds) {
              if (old_index >= 0) t_old = std::min(t_old, time_burst(old));
              t_dot = std::min(t_dot, time_burst(dot));
              t_rows = std::min(t_rows, time_burst(dot_rows));
              if (tile && acts > 1) t_tile = std::min(t_tile, time_burst(run_tile));
              if (tile.small_run && acts > 1) t_small = std::min(t_small, time_burst(run_small));
            }
            const double best = std::min({t_rows, t_tile, t_small});
            const bool has_old = t_old < 1e30, has_tile = t_tile < 1e30, has_small = t_small < 1e30;
            char old_us[32] = "-", tile_us[32] = "-", small_us[32] = "-";
            if (has_old) std::snprintf(old_us, sizeof(old_us), "%.2f", t_old * 1e6);
            if (has_tile) std::snprintf(tile_us, sizeof(tile_us), "%.2f", t_tile * 1e6);
            if (has_small) std::snprintf(small_us, sizeof(small_us), "%.2f", t_small * 1e6);
            std::printf("%-5s %-8s %5lld %5lld %5lld %9s %9.2f %9.2f %9s %9s %8.2fx %9.2f\n", sf::type_name(type),
                        target.c_str(), static_cast<long long>(cols), static_cast<long long>(rows),
                        static_cast<long long>(acts), old_us, t_dot * 1e6, t_rows * 1e6, tile_us, small_us,
                        (has_old ? t_old : t_rows) / best, best * 1e9 / static_cast<double>(rows * acts));
            std::fflush(stdout);
            char line[512];
            std::snprintf(line, sizeof(line),
                          "json: {\"bench\":\"batch\",\"target\":\"%s\",\"type\":\"%s\",\"cols\":%lld,"
                          "\"rows\":%lld,\"acts\":%lld,\"old_us\":%.3f,\"dot_us\":%.3f,\"dot_rows_us\":%.3f,"
                          "\"tile_us\":%.3f,\"small_us\":%.3f}",
                          target.c_str(), sf::type_name(type), static_cast<long long>(cols),
                          static_cast<long long>(rows), static_cast<long long>(acts), has_old ? t_old * 1e6 : -1.0,
                          t_dot * 1e6, t_rows * 1e6, has_tile ? t_tile * 1e6 : -1.0, has_small ? t_small * 1e6 : -1.0);
            json.push_back(line);
          }
        }
      }
    }
  }
  for (const std::string& line : json) std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--batch") return batch(argc, argv);
  }
  int64_t rows = 4096, cols = 4096;
  double min_seconds = 0.6;
  bool with_ref = false, all_targets = false;
  std::string only_types;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ref") {
      with_ref = true;
    } else if (arg == "--all-targets") {
      all_targets = true;
    } else if (arg.rfind("--types=", 0) == 0) {
      only_types = "," + arg.substr(8) + ",";
    } else if (positional == 0) {
      rows = std::stoll(arg), ++positional;
    } else if (positional == 1) {
      cols = std::stoll(arg), ++positional;
    } else {
      min_seconds = std::stod(arg);
    }
  }
  if (cols % 256 != 0) {
    std::fprintf(stderr, "cols must be a multiple of 256\n");
    return 1;
  }

  std::vector<int64_t> targets = sf::dot_kernel_targets();
  if (!all_targets) targets.resize(1);

  std::printf("matvec %lld x %lld, one thread, GB/s of weight bytes (higher is better)\n", static_cast<long long>(rows),
              static_cast<long long>(cols));
  std::printf("%-6s %-8s %-9s %10s %12s %10s\n", "type", "target", "mode", "MB", "ms/matvec", "GB/s");
  std::vector<Result> results;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(cols));
  for (auto& v : x) v = normal(rng);

  for (GgmlType type : kTypes) {
    if (!only_types.empty() && only_types.find("," + std::string(sf::type_name(type)) + ",") == std::string::npos) {
      continue;
    }
    const size_t row_bytes = sf::row_bytes(type, cols);
    const sf::AlignedBuffer w = make_weights(type, rows, cols);
    const double mb = static_cast<double>(row_bytes) * static_cast<double>(rows) / 1e6;
    const GgmlType act_type = sf::default_activation_type(type);
    struct Variant {
      const sf::DotKernel* k;
      std::string target, mode;
      bool use_rows;
    };
    std::vector<Variant> variants;
    for (int64_t t : targets) {
      const sf::DotKernel* k = sf::find_dot_kernel_for_target(type, act_type, t);
      const std::string name = sf::dot_kernel_target_name(t);
      variants.push_back({k, name, "dot_rows", true});
      variants.push_back({k, name, "dot", false});
    }
    if (with_ref) variants.push_back({sf::find_dot_kernel_ref(type, act_type), "ref", "dot", false});
    for (const Variant& v : variants) {
      sf::AlignedBuffer act(sf::row_bytes(act_type, cols), 64);
      v.k->quantize_activation(x.data(), act.data(), cols);
      const double sec = time_matvec(*v.k, w, row_bytes, rows, act.data(), cols, v.use_rows,
                                     v.target == "ref" ? min_seconds / 4 : min_seconds);
      const Result r{sf::type_name(type), v.target, v.mode, mb / 1e3 / sec, sec * 1e3};
      std::printf("%-6s %-8s %-9s %10.1f %12.3f %10.2f\n", r.type.c_str(), r.target.c_str(), r.mode.c_str(), mb,
                  r.ms_per_matvec, r.gbps);
      std::fflush(stdout);
      results.push_back(r);
    }
  }
  for (const Result& r : results) {
    std::printf(
        "json: {\"bench\":\"quant_dot\",\"rows\":%lld,\"cols\":%lld,\"type\":\"%s\","
        "\"target\":\"%s\",\"mode\":\"%s\",\"ms_per_matvec\":%.4f,\"gbps_per_thread\":%.3f}\n",
        static_cast<long long>(rows), static_cast<long long>(cols), r.type.c_str(), r.target.c_str(), r.mode.c_str(),
        r.ms_per_matvec, r.gbps);
  }
  return 0;
}
