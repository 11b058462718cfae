// decode_roofline: prefill and decode speed of fully resident models next to the memory
// bandwidth measured in the same run, as a fraction of the bandwidth roofline
//   roofline fraction = (weight bytes read per token / time per token) / measured bandwidth
// Prints a Markdown table and writes JSON. A benchmark, not a test: it never fails on time.
//
// usage: decode_roofline [--threads N] [--prompt-tokens P] [--decode-tokens D] [--json F] MODEL.gguf...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/memory_usage.h"
#include "base/thread_pool.h"
#include "base/timer.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "model/transformer.h"
#include "sampling/sampler.h"

namespace {

// Best-of-5 read bandwidth over a buffer far larger than the caches, with the same thread
// count as the model runs.
double measure_read_bandwidth(sf::ThreadPool& pool) {
  const size_t bytes = size_t{1} << 30;
  sf::AlignedBuffer buf(bytes, 4096);
  for (size_t i = 0; i < bytes; i += 4096) buf.data()[i] = static_cast<uint8_t>(i);
  double best = 0;
  std::vector<uint64_t> sums(pool.size());
  for (int rep = 0; rep < 5; ++rep) {
    sf::Stopwatch sw;
    const int64_t n = static_cast<int64_t>(bytes / 8);
    pool.parallel_for(n, [&](int64_t b, int64_t e, int t) {
      const uint64_t* p = buf.as<uint64_t>();
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int64_t i = b;
      for (; i + 4 <= e; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
      for (; i < e; ++i) s0 += p[i];
      sums[t] = s0 + s1 + s2 + s3;
    });
    best = std::max(best, bytes / sw.elapsed());
  }
  uint64_t total = 0;
  for (auto s : sums) total += s;
  if (total == 42) std::fprintf(stderr, " ");  // keeps the loads from being optimised away
  return best;
}

size_t weight_bytes_per_token(const sf::ModelWeights& w) {
  size_t bytes = w.output.n_bytes();
  for (const auto& L : w.layers)
    for (const sf::WeightMatrix* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
      bytes += m->n_bytes();
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, prompt_tokens = 64, decode_tokens = 64;
  std::string json_path = "decode_roofline.json";
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads")
      threads = std::atoi(next());
    else if (a == "--prompt-tokens")
      prompt_tokens = std::atoi(next());
    else if (a == "--decode-tokens")
      decode_tokens = std::atoi(next());
    else if (a == "--json")
      json_path = next();
    else
      models.push_back(a);
  }
  if (models.empty()) {
    std::fprintf(
        stderr,
        "usage: decode_roofline [--threads N] [--prompt-tokens P] [--decode-tokens D] [--json F] MODEL.gguf...\n");
    return 2;
  }
  sf::ThreadPool pool(threads);
  std::fprintf(stderr, "measuring memory read bandwidth (%d threads)...\n", threads);
  const double bandwidth = measure_read_bandwidth(pool);

  nlohmann::json report = {
      {"threads", threads}, {"read_bandwidth_gb_s", bandwidth / 1e9}, {"models", nlohmann::json::array()}};
  std::printf("memory read bandwidth (measured, %d threads): %.2f GB/s\n\n", threads, bandwidth / 1e9);
  std::printf("| model | weights MiB | prefill tok/s | decode tok/s | GB/s achieved | roofline fraction |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& path : models) {
    auto loaded = sf::Model::load(path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "error: %s\n", loaded.status().message().c_str());
      return 1;
    }
    const sf::Model& model = **loaded;
    const auto& hp = model.hparams();
    sf::Transformer tf(hp, pool);
    sf::KvCache cache(hp.n_layer, prompt_tokens + decode_tokens + 1, hp.n_head_kv, hp.head_dim);
    std::vector<int32_t> prompt(prompt_tokens);
    for (int i = 0; i < prompt_tokens; ++i) prompt[i] = 1 + (i * 7919) % (hp.n_vocab - 1);

    std::vector<float> hidden(static_cast<size_t>(prompt_tokens) * hp.n_embd), logits(hp.n_vocab);
    sf::Stopwatch prefill;
    tf.embed(model.weights(), prompt.data(), prompt_tokens, hidden.data());
    tf.run_layers(model.weights(), sf::ForwardBatch::causal(prompt, 0), 0, hp.n_layer, cache, hidden.data());
    tf.logits(model.weights(), hidden.data() + static_cast<size_t>(prompt_tokens - 1) * hp.n_embd, 1, logits.data());
    const double prefill_s = prefill.elapsed();

    std::vector<float> h1(hp.n_embd);
    sf::Stopwatch decode;
    for (int i = 0; i < decode_tokens; ++i) {
      const int32_t next = sf::argmax(logits.data(), hp.n_vocab);
      tf.embed(model.weights(), &next, 1, h1.data());
      tf.run_layers(model.weights(), sf::ForwardBatch::causal({next}, prompt_tokens + i), 0, hp.n_layer, cache,
                    h1.data());
      tf.logits(model.weights(), h1.data(), 1, logits.data());
    }
    const double decode_s = decode.elapsed();
    const double decode_tps = decode_tokens / decode_s;
    const double bytes_per_token = static_cast<double>(weight_bytes_per_token(model.weights()));
    const double achieved = bytes_per_token * decode_tps;
    const std::string name = path.substr(path.rfind('/') + 1);
    std::printf("| %s | %.0f | %.1f | %.2f | %.2f | %.2f |\n", name.c_str(), bytes_per_token / 1048576.0,
                prompt_tokens / prefill_s, decode_tps, achieved / 1e9, achieved / bandwidth);
    std::fflush(stdout);
    report["models"].push_back({{"model", name},
                                {"weight_bytes_per_token", bytes_per_token},
                                {"prompt_tokens", prompt_tokens},
                                {"decode_tokens", decode_tokens},
                                {"prefill_tokens_per_s", prompt_tokens / prefill_s},
                                {"decode_tokens_per_s", decode_tps},
                                {"achieved_gb_s", achieved / 1e9},
                                {"roofline_fraction", achieved / bandwidth},
                                {"peak_rss_bytes", sf::peak_rss_bytes()}});
  }
  std::ofstream(json_path) << report.dump(2) << "\n";
  std::fprintf(stderr, "wrote %s\n", json_path.c_str());
  return 0;
}
