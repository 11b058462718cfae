#include "train/trainer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>

#include "base/fnv1a.h"
#include "train/train_loop.h"

namespace sf::train {

void TeacherData::append(const TeacherData& o) {
  SF_CHECK(seq_len == o.seq_len && k == o.k);
  tokens.insert(tokens.end(), o.tokens.begin(), o.tokens.end());
  ids.insert(ids.end(), o.ids.begin(), o.ids.end());
  logits.insert(logits.end(), o.logits.begin(), o.logits.end());
  lse.insert(lse.end(), o.lse.begin(), o.lse.end());
}

namespace {

// Window order of one epoch: a permutation seeded by (seed, epoch).
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  return order;
}

// What a checkpoint must share with the run resuming it: the draft's shape, the data (its
// tokens' hash), the window length, the batch and the seed.
CheckpointIdentity identity_for(const DraftConfig& c, const TeacherData& d, const TrainOptions& o) {
  char data[32];
  std::snprintf(data, sizeof(data), "%016" PRIx64, fnv1a(d.tokens.data(), d.tokens.size() * sizeof(int32_t)));
  return {{"trainer", "distill"},
          {"draft", std::to_string(c.n_vocab) + "x" + std::to_string(c.n_embd) + ", " + std::to_string(c.n_layer) +
                        " layers, heads " + std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + ", ffn " +
                        std::to_string(c.n_ff)},
          {"data", data},
          {"seq-len", std::to_string(d.seq_len)},
          {"top-k", std::to_string(d.k)},
          {"batch", std::to_string(o.batch)},
          {"seed", std::to_string(o.seed)}};
}

}  // namespace

Result<TrainResult> train_draft(const DraftConfig& c, const TeacherData& data, const TrainOptions& o,
                                ThreadPool& pool) {
  SF_RETURN_IF_ERROR(c.validate());
  const int64_t n_windows = data.n_windows();
  if (n_windows < 1) return Status::Error("distill: no training windows (the data is shorter than one context)");
  if (o.batch < 1 || o.steps < 1) return Status::Error("distill: --batch and --steps must be positive");
  const int64_t L = data.seq_len, V = c.n_vocab, k = data.k;
  const int B = static_cast<int>(std::min<int64_t>(o.batch, n_windows));

  ParamLayout layout(c);
  TrainResult result;
  result.params = init_params(c, o.seed);
  std::vector<uint8_t> decay(layout.total, 0);
  for (const auto& t : layout.named(c))
    if (t.rows > 1) std::fill_n(decay.begin() + t.offset, t.cols * t.rows, 1);

  LoopOptions lo;
  lo.steps = o.steps;
  lo.lr = o.lr;
  lo.min_lr_ratio = o.min_lr_ratio;
  lo.warmup = o.warmup;
  lo.weight_decay = o.weight_decay;
  lo.clip = o.clip;
  lo.checkpoint = o.checkpoint;
  lo.checkpoint_every = o.checkpoint_every;
  lo.resume = o.resume;
  lo.stop_after = o.stop_after;
  lo.progress = o.progress;
  lo.label = "distill";
  lo.tokens_per_step = static_cast<int64_t>(B) * L;
  lo.identity = identity_for(c, data, o);

  DraftModelRunner<float> runner(c, &pool);
  std::vector<int32_t> btok(B * L), bids(B * L * k);
  std::vector<float> blog(B * L * k), blse(B * L), dlogits(B * L * V);
  int64_t cached_epoch = -1;
  std::vector<int64_t> order;
  SF_ASSIGN_OR_RETURN(LoopResult loop,
                      run_train_loop(result.params, decay, lo, [&](int64_t step, const float* params, float* grad) {
                        for (int b = 0; b < B; ++b) {
                          const int64_t slot = step * B + b, epoch = slot / n_windows;
                          if (epoch != cached_epoch) {
                            order = epoch_order(n_windows, o.seed, epoch);
                            cached_epoch = epoch;
                          }
                          const int64_t w = order[slot % n_windows];
                          std::copy_n(data.tokens.begin() + w * L, L, btok.begin() + b * L);
                          std::copy_n(data.ids.begin() + w * L * k, L * k, bids.begin() + b * L * k);
                          std::copy_n(data.logits.begin() + w * L * k, L * k, blog.begin() + b * L * k);
                          std::copy_n(data.lse.begin() + w * L, L, blse.begin() + b * L);
                        }
                        const std::vector<float>& logits = runner.forward(params, btok.data(), B, L);
                        TeacherTopK teacher{static_cast<int>(k), bids.data(), blog.data(), blse.data()};
                        const double loss = distill_loss(o.loss, logits.data(), teacher, B * L, V, dlogits.data());
                        runner.backward(params, dlogits.data(), grad);
                        return loss;
                      }));
  result.final_loss = loop.final_loss;
  result.seconds = loop.seconds;
  result.tokens_per_s = loop.tokens_per_s;
  result.resumed_from = loop.resumed_from;
  return result;
}

Agreement evaluate_agreement(const DraftConfig& c, const std::vector<float>& params, const TeacherData& data,
                             DistillLoss loss, ThreadPool& pool) {
  Agreement a;
  const int64_t L = data.seq_len, V = c.n_vocab, k = data.k;
  DraftModelRunner<float> runner(c, &pool);
  std::vector<float> d(L * V);
  int64_t hits = 0;
  for (int64_t w = 0; w < data.n_windows(); ++w) {
    const std::vector<float>& logits = runner.forward(params.data(), data.tokens.data() + w * L, 1, L);
    TeacherTopK t{static_cast<int>(k), data.ids.data() + w * L * k, data.logits.data() + w * L * k,
                  data.lse.data() + w * L};
    a.loss += distill_loss(loss, logits.data(), t, L, V, d.data());
    for (int64_t i = 0; i < L; ++i) {
      const float* row = logits.data() + i * V;
      const int64_t arg = std::max_element(row, row + V) - row;
      hits += arg == data.ids[(w * L + i) * k];
    }
    a.positions += L;
  }
  if (data.n_windows() > 0) a.loss /= static_cast<double>(data.n_windows());
  a.top1 = a.positions > 0 ? static_cast<double>(hits) / static_cast<double>(a.positions) : 0;
  return a;
}

}  // namespace sf::train
