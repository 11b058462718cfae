// attention_bench: what attention and multi-row passes cost, for docs/kernels.md.
// A benchmark, not a test: it never fails on time. Markdown tables to stdout, JSON to --json.
//
//   attention_bench ops [--threads N] [--repeats R]
//     The attention op alone on the shapes that matter (stories260K tree verification,
//     TinyLlama-1.1B-shaped decode at short and long context), the SIMD kernel next to the
//     per-cell kernel it replaced (kept below, verbatim in behaviour, as `per_cell_attention`),
//     both in this process, with their ratio. The op reads the keys and values head-major
//     (KvCache's layout since 8ba254e), the baseline the same values one row per cell.
//
//   attention_bench curve [--heads 8/8] [--head-dim 8] [--contexts 64,2048] [--rows 1,2,4,...]
//     The attention op alone (one layer) on tree-shaped batches of every --rows count after
//     every context, next to the one-task-per-(row, KV head) driver it replaced (kept below as
//     `per_row_attention`), interleaved in this process; minimum of --repeats rounds. The op
//     reads a head-major copy of the keys and values (the cache's layout), the old driver
//     the cell-major original.
//
//   attention_bench model MODEL.gguf [--contexts 64,2048] [--rows 1,2,4,...] [--repeats R]
//     Whole resident forward passes of the model's layers (embed, every layer, LM head of
//     the last row) with the KV cache filled with random keys/values up to each context:
//     for each context, a pass of R rows shaped as a token tree (each node sees the
//     context, its ancestors and itself, like speculative verification) for every R in
//     --rows. rows=1 at each context is plain decoding. Prints ms per pass and the ratios to
//     1 row and to the first context. The kernels are whatever this binary was built with:
//     build it at two commits to compare them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "base/thread_pool.h"
#include "base/timer.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/model.h"
#include "model/transformer.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/attention_rows.h"
#include "ops/attention_simd.h"
#include "ops/visible_cells.h"
#include "quant/dot_kernel.h"

namespace {

// The kernel attention() used before the SIMD row kernel (commit 35001a7): per (row, head),
// an F16 x F32 dot_rows over every cell, scores of masked cells discarded, a scalar softmax
// over all cells and one axpy per visible cell. Kept here only as the benchmark's baseline.
void per_cell_attention(const sf::AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k,
                        const uint16_t* v, int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out,
                        sf::ThreadPool& pool) {
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim;
  const sf::DotKernel* dot = sf::find_dot_kernel(sf::GgmlType::F16, sf::GgmlType::F32);
  pool.parallel_for(n_tokens * s.n_head, [&](int64_t begin, int64_t end, int) {
    std::vector<float> scores(static_cast<size_t>(n_kv));
    std::vector<float> acc(static_cast<size_t>(s.head_dim));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / s.n_head;
      const int h = static_cast<int>(task % s.n_head);
      const int kvh = h / group;
      const float* qh = q + t * q_row + static_cast<int64_t>(h) * s.head_dim;
      const uint8_t* m = mask + t * n_kv;
      dot->dot_rows(k + static_cast<int64_t>(kvh) * s.head_dim, kv_row * sizeof(uint16_t), n_kv, qh, s.head_dim,
                    scores.data());
      for (int64_t c = 0; c < n_kv; ++c)
        scores[c] = m[c] ? scores[c] * s.scale : -std::numeric_limits<float>::infinity();
      sf::softmax_inplace(scores.data(), n_kv);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t c = 0; c < n_kv; ++c) {
        if (scores[c] == 0.0f) continue;
        sf::axpy_f16(scores[c], v + c * kv_row + static_cast<int64_t>(kvh) * s.head_dim, acc.data(), s.head_dim);
      }
      float* o = out + t * q_row + static_cast<int64_t>(h) * s.head_dim;
      for (int d = 0; d < s.head_dim; ++d) o[d] = acc[d];
    }
  });
}

// The attention() driver before rows shared their prefix (commit 6500bc2): one task per
// (row, KV head), each widening every one of its visible cells itself. The kernel is the same
// row kernel. Kept here only as the `curve` mode's baseline.
void per_row_attention(const sf::AttentionShape& s, const float* q, int64_t n_tokens, const uint16_t* k,
                       const uint16_t* v, int64_t kv_row, int64_t n_kv, const uint8_t* mask, float* out,
                       sf::ThreadPool& pool) {
  const int group = s.n_head / s.n_head_kv;
  const int64_t q_row = static_cast<int64_t>(s.n_head) * s.head_dim;
  const int64_t head_block = static_cast<int64_t>(group) * s.head_dim;
  const auto attend_tasks = [&](int64_t begin, int64_t end, int) {
    thread_local std::vector<int32_t> cells;
    thread_local std::vector<float> scores;
    if (cells.size() < static_cast<size_t>(n_kv)) cells.resize(static_cast<size_t>(n_kv));
    const auto scratch = static_cast<size_t>(sf::attention_row_scratch_floats(group, s.head_dim, n_kv));
    if (scores.size() < scratch) scores.resize(scratch);
    int64_t listed_row = -1, n_cells = 0;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / s.n_head_kv;
      const int kvh = static_cast<int>(task % s.n_head_kv);
      if (t != listed_row) {
        n_cells = sf::visible_cells(mask + t * n_kv, n_kv, cells.data());
        listed_row = t;
      }
      float* o = out + t * q_row + kvh * head_block;
      if (n_cells == 0) {
        std::fill(o, o + head_block, 0.0f);
        continue;
      }
      sf::AttentionRowArgs a;
      a.q = q + t * q_row + kvh * head_block;
      a.group = group;
      a.head_dim = s.head_dim;
      a.scale = s.scale;
      a.k = k + static_cast<int64_t>(kvh) * s.head_dim;
      a.v = v + static_cast<int64_t>(kvh) * s.head_dim;
      a.kv_row = kv_row;
      a.cells = cells.data();
      a.n_cells = n_cells;
      a.scores = scores.data();
      a.out = o;
      sf::attend_visible_cells(a);
    }
  };
  const double task_work = 2.0 * static_cast<double>(n_kv) * static_cast<double>(head_block);
  pool.parallel_for(n_tokens * s.n_head_kv, attend_tasks, pool.grain_for_work(task_work));
}

// A token tree of n nodes after `prefix` committed cells: node i's parent is a random
// earlier node (node 0 is the root); node i is in cell prefix + i at position prefix + depth.
sf::ForwardBatch tree_batch(int prefix, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  sf::ForwardBatch b;
  b.n_kv = prefix + n;
  b.mask.assign(static_cast<size_t>(n) * b.n_kv, 0);
  std::vector<int> parent(n), depth(n);
  for (int i = 0; i < n; ++i) {
    parent[i] = i == 0 ? -1 : static_cast<int>(rng() % i);
    depth[i] = i == 0 ? 0 : depth[parent[i]] + 1;
    b.tokens.push_back(static_cast<int32_t>(1 + rng() % 200));
    b.positions.push_back(prefix + depth[i]);
    b.kv_cells.push_back(prefix + i);
    uint8_t* row = b.mask.data() + static_cast<size_t>(i) * b.n_kv;
    std::fill(row, row + prefix, 1);
    for (int a = i; a >= 0; a = parent[a]) row[prefix + a] = 1;
  }
  return b;
}

// The same keys (values) as KvCache lays them out: a head's cells in a row (head-major),
// from one row of all heads per cell (the baselines' layout).
std::vector<uint16_t> head_major_copy(const std::vector<uint16_t>& cell_major, int64_t n_kv, int n_head_kv,
                                      int head_dim) {
  std::vector<uint16_t> out(cell_major.size());
  for (int64_t c = 0; c < n_kv; ++c)
    for (int h = 0; h < n_head_kv; ++h)
      std::copy_n(cell_major.begin() + (c * n_head_kv + h) * head_dim, head_dim,
                  out.begin() + (h * n_kv + c) * head_dim);
  return out;
}

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

template <class F>
std::vector<double> sample_seconds(int repeats, F&& fn) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    sf::Stopwatch sw;
    fn();
    t.push_back(sw.elapsed());
  }
  std::sort(t.begin(), t.end());
  return t;
}

template <class F>
double median_seconds(int repeats, F&& fn) {
  const auto t = sample_seconds(repeats, fn);
  return t[t.size() / 2];
}

int run_ops(int threads, int repeats, const std::string& only, const std::string& json_path) {
  struct Case {
    const char* name;
    int n_head, n_head_kv, head_dim, prefix, rows;
  };
  const Case cases[] = {
      {"stories260K decode, 128 ctx", 8, 4, 8, 128, 1},   {"stories260K tree 16, 128 ctx", 8, 4, 8, 128, 16},
      {"stories260K tree 64, 128 ctx", 8, 4, 8, 128, 64}, {"stories260K tree 64, 512 ctx", 8, 4, 8, 512, 64},
      {"1.1B decode, 64 ctx", 32, 4, 64, 64, 1},          {"1.1B decode, 2048 ctx", 32, 4, 64, 2048, 1},
      {"1.1B tree 16, 2048 ctx", 32, 4, 64, 2048, 16},    {"head_dim 128 decode, 2048 ctx", 32, 8, 128, 2048, 1},
  };
  sf::ThreadPool pool(threads);
  nlohmann::json rows = nlohmann::json::array();
  std::printf("attention op alone (one layer), %d threads, median of %d\n\n", threads, repeats);
  std::printf("| shape | heads (q/kv) x head_dim | rows | n_kv | per-cell us | SIMD us | speed-up |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  for (const Case& c : cases) {
    if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
    const sf::AttentionShape s{c.n_head, c.n_head_kv, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    const sf::ForwardBatch b = tree_batch(c.prefix, c.rows, 7);
    const int64_t n_kv = b.n_kv, kv_row = static_cast<int64_t>(c.n_head_kv) * c.head_dim;
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<uint16_t> k(n_kv * kv_row), v(n_kv * kv_row);
    for (auto& x : k) x = sf::fp32_to_fp16(dist(rng));
    for (auto& x : v) x = sf::fp32_to_fp16(dist(rng));
    std::vector<float> q(static_cast<size_t>(c.rows) * c.n_head * c.head_dim), out(q.size());
    for (auto& x : q) x = dist(rng);
    // The op reads the cache's layout; the per-cell baseline the one it was written for.
    const std::vector<uint16_t> kh = head_major_copy(k, n_kv, c.n_head_kv, c.head_dim),
                                vh = head_major_copy(v, n_kv, c.n_head_kv, c.head_dim);
    const sf::KvLayout layout = sf::KvLayout::head_major(n_kv, c.head_dim);
    // Enough calls per sample that one sample takes ~10 ms.
    int calls = 1;
    for (;;) {
      sf::Stopwatch sw;
      for (int i = 0; i < calls; ++i)
        sf::attention(s, q.data(), c.rows, kh.data(), vh.data(), layout, n_kv, b.mask.data(), out.data(), pool);
      if (sw.elapsed() > 0.01 || calls > (1 << 20)) break;
      calls *= 2;
    }
    // Interleaved samples so that load on the shared machine hits both alike.
    std::vector<double> olds, news;
    for (int r = 0; r < repeats; ++r) {
      olds.push_back(median_seconds(1, [&] {
        for (int i = 0; i < calls; ++i)
          per_cell_attention(s, q.data(), c.rows, k.data(), v.data(), kv_row, n_kv, b.mask.data(), out.data(), pool);
      }));
      news.push_back(median_seconds(1, [&] {
        for (int i = 0; i < calls; ++i)
          sf::attention(s, q.data(), c.rows, kh.data(), vh.data(), layout, n_kv, b.mask.data(), out.data(), pool);
      }));
    }
    std::sort(olds.begin(), olds.end());
    std::sort(news.begin(), news.end());
    const double t_old = olds[olds.size() / 2] / calls, t_new = news[news.size() / 2] / calls;
    std::printf("| %s | %d/%d x %d | %d | %lld | %.1f | %.1f | %.2fx |\n", c.name, c.n_head, c.n_head_kv, c.head_dim,
                c.rows, static_cast<long long>(n_kv), t_old * 1e6, t_new * 1e6, t_old / t_new);
    std::fflush(stdout);
    rows.push_back({{"shape", c.name},
                    {"n_head", c.n_head},
                    {"n_head_kv", c.n_head_kv},
                    {"head_dim", c.head_dim},
                    {"rows", c.rows},
                    {"n_kv", n_kv},
                    {"per_cell_us", t_old * 1e6},
                    {"simd_us", t_new * 1e6},
                    {"speedup", t_old / t_new}});
  }
  if (!json_path.empty())
    std::ofstream(json_path) << nlohmann::json{{"mode", "ops"}, {"threads", threads}, {"cases", rows}}.dump(2) << "\n";
  return 0;
}

int run_curve(int threads, int repeats, int n_head, int n_head_kv, int head_dim, const std::vector<int>& contexts,
              const std::vector<int>& row_counts, const std::string& json_path) {
  const sf::AttentionShape s{n_head, n_head_kv, head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim))};
  const int64_t kv_row = static_cast<int64_t>(n_head_kv) * head_dim;
  sf::ThreadPool pool(threads);
  struct Shape {
    int ctx, rows;
    sf::ForwardBatch batch;
    std::vector<uint16_t> k, v;    // one row of all heads per cell (the baseline's layout)
    std::vector<uint16_t> kh, vh;  // the same, head-major (the cache's layout, the op's input)
    std::vector<float> q, out;
    int calls = 1;
    std::vector<double> per_row, shared;  // seconds per call
  };
  std::vector<Shape> shapes;
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int ctx : contexts)
    for (int rows : row_counts) {
      Shape sh{ctx, rows, tree_batch(ctx, rows, 11), {}, {}, {}, {}, {}, {}, 1, {}, {}};
      const int64_t n_kv = sh.batch.n_kv;
      sh.k.resize(n_kv * kv_row);
      sh.v.resize(n_kv * kv_row);
      for (auto& x : sh.k) x = sf::fp32_to_fp16(dist(rng));
      for (auto& x : sh.v) x = sf::fp32_to_fp16(dist(rng));
      sh.kh = head_major_copy(sh.k, n_kv, n_head_kv, head_dim);
      sh.vh = head_major_copy(sh.v, n_kv, n_head_kv, head_dim);
      sh.q.resize(static_cast<size_t>(rows) * n_head * head_dim);
      sh.out.resize(sh.q.size());
      for (auto& x : sh.q) x = dist(rng);
      shapes.push_back(std::move(sh));
    }
  const auto run = [&](Shape& sh, bool shared) {
    for (int i = 0; i < sh.calls; ++i)
      if (shared)
        sf::attention(s, sh.q.data(), sh.rows, sh.kh.data(), sh.vh.data(),
                      sf::KvLayout::head_major(sh.batch.n_kv, head_dim), sh.batch.n_kv, sh.batch.mask.data(),
                      sh.out.data(), pool);
      else
        per_row_attention(s, sh.q.data(), sh.rows, sh.k.data(), sh.v.data(), kv_row, sh.batch.n_kv,
                          sh.batch.mask.data(), sh.out.data(), pool);
  };

  // Enough calls per sample that one sample takes ~5 ms.
  for (Shape& sh : shapes)
    for (;;) {
      sf::Stopwatch sw;
      run(sh, true);
      if (sw.elapsed() > 0.005 || sh.calls > (1 << 20)) break;
      sh.calls *= 2;
    }
  // Every shape and both drivers once per round: load from other jobs falls on all alike.
  for (int round = 0; round < repeats; ++round)
    for (Shape& sh : shapes)
      for (bool shared : {false, true}) {
        sf::Stopwatch sw;
        run(sh, shared);
        (shared ? sh.shared : sh.per_row).push_back(sw.elapsed() / sh.calls);
      }
  std::printf("attention op alone (one layer), %d/%d heads x %d, %d threads, minimum of %d rounds\n\n", n_head,
              n_head_kv, head_dim, threads, repeats);
  std::printf(
      "| context | rows | per-row us | shared us | speed-up | per-row / 1 row | shared / 1 row |\n"
      "|---:|---:|---:|---:|---:|---:|---:|\n");
  nlohmann::json out = nlohmann::json::array();
  for (const Shape& sh : shapes) {
    const double old_t = *std::min_element(sh.per_row.begin(), sh.per_row.end());
    const double new_t = *std::min_element(sh.shared.begin(), sh.shared.end());
    double old_one = 0, new_one = 0;
    for (const Shape& o : shapes)
      if (o.ctx == sh.ctx && o.rows == 1) {
        old_one = *std::min_element(o.per_row.begin(), o.per_row.end());
        new_one = *std::min_element(o.shared.begin(), o.shared.end());
      }
    std::printf("| %d | %d | %.1f | %.1f | %.2fx | %.2fx | %.2fx |\n", sh.ctx, sh.rows, old_t * 1e6, new_t * 1e6,
                old_t / new_t, old_one > 0 ? old_t / old_one : 0.0, new_one > 0 ? new_t / new_one : 0.0);
    out.push_back({{"context", sh.ctx}, {"rows", sh.rows}, {"per_row_us", old_t * 1e6}, {"shared_us", new_t * 1e6}});
  }
  if (!json_path.empty())
    std::ofstream(json_path) << nlohmann::json{{"mode", "curve"},      {"n_head", n_head},   {"n_head_kv", n_head_kv},
                                               {"head_dim", head_dim}, {"threads", threads}, {"passes", out}}
                                    .dump(2)
                             << "\n";
  return 0;
}

int run_model(const std::string& path, int threads, int repeats, const std::vector<int>& contexts,
              const std::vector<int>& row_counts, const std::string& json_path) {
  auto loaded = sf::Model::load(path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "error: %s\n", loaded.status().message().c_str());
    return 1;
  }
  const sf::Model& model = **loaded;
  const auto& hp = model.hparams();
  sf::ThreadPool pool(threads);
  sf::Transformer tf(hp, pool);
  const int max_ctx = *std::max_element(contexts.begin(), contexts.end());
  const int max_rows = *std::max_element(row_counts.begin(), row_counts.end());
  sf::KvCache cache(hp.n_layer, max_ctx + max_rows, hp.n_head_kv, hp.head_dim);
  // Random keys/values for the context (attention's cost does not depend on their values;
  // small keys keep the softmax spread over many cells, like a real long context).
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 0.3f);
  for (int l = 0; l < hp.n_layer; ++l)
    for (int h = 0; h < hp.n_head_kv; ++h)
      for (int c = 0; c < max_ctx + max_rows; ++c)
        for (int i = 0; i < hp.head_dim; ++i) {
          cache.k(l, h, c)[i] = sf::fp32_to_fp16(dist(rng));
          cache.v(l, h, c)[i] = sf::fp32_to_fp16(dist(rng));
        }
  std::vector<float> hidden(static_cast<size_t>(max_rows) * hp.n_embd), logits(hp.n_vocab);
  std::printf("%s: %d layers, %d/%d heads x %d, %d threads, %d rounds of every shape\n\n",
              path.substr(path.rfind('/') + 1).c_str(), hp.n_layer, hp.n_head, hp.n_head_kv, hp.head_dim, threads,
              repeats);
  // The minimum is shown next to the median: on a shared machine, other jobs only ever add
  // time, so the minimum is the better estimate of the pass's own cost.
  std::printf(
      "| context | rows | median ms | min ms | min / min of 1 row | 1 row / 1 row at %d (min) |\n"
      "|---:|---:|---:|---:|---:|---:|\n",
      contexts.front());
  nlohmann::json out = nlohmann::json::array();
  // Every shape once per round, rounds repeated: load from other jobs on a shared machine
  // then falls on all shapes alike, so the ratios between them hold up better than the
  // absolute times.
  struct Shape {
    int ctx, rows;
    sf::ForwardBatch batch;
    std::vector<double> samples;
  };
  std::vector<Shape> shapes;
  for (int ctx : contexts)
    for (int rows : row_counts) shapes.push_back({ctx, rows, tree_batch(ctx, rows, 11), {}});
  for (int round = 0; round <= repeats; ++round) {
    for (Shape& sh : shapes) {
      sf::Stopwatch sw;
      tf.embed(model.weights(), sh.batch.tokens.data(), sh.rows, hidden.data());
      tf.run_layers(model.weights(), sh.batch, 0, hp.n_layer, cache, hidden.data());
      tf.logits(model.weights(), hidden.data() + static_cast<size_t>(sh.rows - 1) * hp.n_embd, 1, logits.data());
      if (round > 0) sh.samples.push_back(sw.elapsed());  // round 0 warms
    }
  }
  double first_one = 0;
  for (Shape& sh : shapes) {
    std::sort(sh.samples.begin(), sh.samples.end());
    const double t = sh.samples.front(), median = sh.samples[sh.samples.size() / 2];
    double one = 0;
    for (const Shape& o : shapes)
      if (o.ctx == sh.ctx && o.rows == 1) one = *std::min_element(o.samples.begin(), o.samples.end());
    if (sh.rows == 1 && first_one == 0) first_one = t;
    char vs_first[32] = "";
    if (sh.rows == 1) std::snprintf(vs_first, sizeof(vs_first), "%.2fx", t / first_one);
    std::printf("| %d | %d | %.3f | %.3f | %.2fx | %s |\n", sh.ctx, sh.rows, median * 1e3, t * 1e3,
                one > 0 ? t / one : 0.0, vs_first);
    out.push_back({{"context", sh.ctx},
                   {"rows", sh.rows},
                   {"min_seconds", t},
                   {"median_seconds", median},
                   {"samples", sh.samples}});
  }
  if (!json_path.empty())
    std::ofstream(json_path)
        << nlohmann::json{{"mode", "model"}, {"model", path}, {"threads", threads}, {"passes", out}}.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: attention_bench ops [--threads N] [--repeats R] [--only SHAPE-SUBSTRING] [--json F]\n"
      "       attention_bench curve [--heads 8/8] [--head-dim 8] [--contexts 64,2048] [--rows 1,16,64] [--threads N] "
      "[--repeats R] [--json F]\n"
      "       attention_bench model MODEL.gguf [--contexts 64,2048] [--rows 1,16,64] [--threads N] [--repeats R] "
      "[--json F]\n";
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 2;
  }
  const std::string mode = argv[1];
  int threads = 2, repeats = 5, n_head = 8, n_head_kv = 8, head_dim = 8;
  std::string json_path, model_path, only;
  std::vector<int> contexts = {64, 2048}, rows = {1};
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n%s", a.c_str(), usage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads")
      threads = std::atoi(next().c_str());
    else if (a == "--repeats")
      repeats = std::atoi(next().c_str());
    else if (a == "--json")
      json_path = next();
    else if (a == "--only")
      only = next();
    else if (a == "--contexts")
      contexts = parse_ints(next());
    else if (a == "--rows")
      rows = parse_ints(next());
    else if (a == "--heads") {
      const std::string h = next();
      n_head = std::atoi(h.c_str());
      n_head_kv = h.find('/') == std::string::npos ? n_head : std::atoi(h.c_str() + h.find('/') + 1);
    } else if (a == "--head-dim")
      head_dim = std::atoi(next().c_str());
    else if (mode == "model" && model_path.empty() && a[0] != '-')
      model_path = a;
    else {
      std::fprintf(stderr, "error: unknown argument %s\n%s", a.c_str(), usage);
      return 2;
    }
  }
  auto positive = [](const std::vector<int>& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](int x) { return x > 0; });
  };
  if (threads < 1 || repeats < 1 || !positive(contexts) || !positive(rows)) {
    std::fprintf(stderr, "error: --threads, --repeats, --contexts and --rows need positive values\n%s", usage);
    return 2;
  }
  if (mode == "ops") return run_ops(threads, repeats, only, json_path);
  if (mode == "curve") {
    if (n_head < 1 || n_head_kv < 1 || n_head % n_head_kv != 0 || head_dim < 1) {
      std::fprintf(stderr, "error: --heads Q/KV needs Q a multiple of KV, and --head-dim a positive size\n%s", usage);
      return 2;
    }
    return run_curve(threads, repeats, n_head, n_head_kv, head_dim, contexts, rows, json_path);
  }
  if (mode == "model") {
    if (model_path.empty()) {
      std::fprintf(stderr, "error: model mode needs a GGUF file\n%s", usage);
      return 2;
    }
    return run_model(model_path, threads, repeats, contexts, rows, json_path);
  }
  std::fprintf(stderr, "error: unknown mode %s\n%s", mode.c_str(), usage);
  return 2;
}
