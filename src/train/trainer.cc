#include "train/trainer.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

#include "base/output_file.h"
#include "train/optimizer.h"

namespace sf::train {

void TeacherData::append(const TeacherData& o) {
  SF_CHECK(seq_len == o.seq_len && k == o.k);
  tokens.insert(tokens.end(), o.tokens.begin(), o.tokens.end());
  ids.insert(ids.end(), o.ids.begin(), o.ids.end());
  logits.insert(logits.end(), o.logits.begin(), o.logits.end());
  lse.insert(lse.end(), o.lse.begin(), o.lse.end());
}

namespace {

constexpr char kMagic[8] = {'S', 'F', 'D', 'C', 'K', 'P', 'T', '1'};

// Window order of one epoch: a permutation seeded by (seed, epoch).
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  return order;
}

struct CheckpointHeader {
  int32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, seq_len, batch;
  uint64_t seed;
  int64_t step, n_params;
};

CheckpointHeader header_for(const DraftConfig& c, const TeacherData& d, const TrainOptions& o, int64_t step,
                            int64_t n) {
  return {c.n_vocab, c.n_embd, c.n_layer, c.n_head, c.n_head_kv, c.n_ff, d.seq_len, o.batch, o.seed, step, n};
}

Status save_checkpoint(const std::string& path, const CheckpointHeader& h, const std::vector<float>& params,
                       AdamW& opt) {
  const std::string tmp = path + ".tmp";
  FILE* f = open_output_file(tmp);
  if (!f) return Status::Errorf("%s: cannot write checkpoint: %s", tmp.c_str(), std::strerror(errno));
  bool ok = std::fwrite(kMagic, 1, 8, f) == 8 && std::fwrite(&h, sizeof(h), 1, f) == 1;
  for (const std::vector<float>* v :
       {&params, const_cast<const std::vector<float>*>(&opt.m()), const_cast<const std::vector<float>*>(&opt.v())})
    ok = ok && std::fwrite(v->data(), sizeof(float), v->size(), f) == v->size();
  // A failed write leaves nothing behind and the previous checkpoint unchanged.
  return commit_output_file(f, ok, ok ? 0 : errno, tmp, path).with_context("writing the checkpoint");
}

Status load_checkpoint(const std::string& path, const CheckpointHeader& expect, std::vector<float>* params, AdamW* opt,
                       int64_t* step) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Errorf("%s: cannot open checkpoint", path.c_str());
  char magic[8];
  CheckpointHeader h{};
  bool ok =
      std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kMagic, 8) == 0 && std::fread(&h, sizeof(h), 1, f) == 1;
  if (!ok) {
    std::fclose(f);
    return Status::Errorf("%s: not a specflash distill checkpoint", path.c_str());
  }
  CheckpointHeader cmp = h;
  cmp.step = expect.step;
  if (std::memcmp(&cmp, &expect, sizeof(h)) != 0) {
    std::fclose(f);
    return Status::Errorf(
        "%s: checkpoint was made with a different draft shape, context, batch or seed; remove it or change "
        "--checkpoint",
        path.c_str());
  }
  for (std::vector<float>* v : {params, &opt->m(), &opt->v()})
    ok = ok && std::fread(v->data(), sizeof(float), v->size(), f) == v->size();
  std::fclose(f);
  if (!ok) return Status::Errorf("%s: checkpoint is truncated", path.c_str());
  *step = h.step;
  opt->set_steps_taken(h.step);
  return Status::Ok();
}

std::string format_duration(double s) {
  char buf[32];
  int t = static_cast<int>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof(buf), "%dh%02dm", t / 3600, t / 60 % 60);
  else
    std::snprintf(buf, sizeof(buf), "%dm%02ds", t / 60, t % 60);
  return buf;
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
  std::vector<float>& params = result.params;
  AdamW opt({o.lr, 0.9f, 0.95f, 1e-8f, o.weight_decay}, layout.total);
  std::vector<uint8_t> decay(layout.total, 0);
  for (const auto& t : layout.named(c))
    if (t.rows > 1) std::fill_n(decay.begin() + t.offset, t.cols * t.rows, 1);

  int64_t start = 0;
  if (o.resume && !o.checkpoint.empty()) {
    if (FILE* f = std::fopen(o.checkpoint.c_str(), "rb")) {
      std::fclose(f);
      SF_RETURN_IF_ERROR(load_checkpoint(o.checkpoint, header_for(c, data, o, 0, layout.total), &params, &opt, &start));
      if (start > o.steps)
        return Status::Errorf("%s: checkpoint is at step %lld, past --steps %lld", o.checkpoint.c_str(),
                              static_cast<long long>(start), static_cast<long long>(o.steps));
      result.resumed_from = start;
    }
  }

  DraftModelRunner<float> runner(c, &pool);
  std::vector<int32_t> btok(B * L), bids(B * L * k);
  std::vector<float> blog(B * L * k), blse(B * L), dlogits(B * L * V), grad(layout.total);
  std::vector<double> recent;
  int64_t cached_epoch = -1;
  std::vector<int64_t> order;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = start; step < o.steps; ++step) {
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
    const std::vector<float>& logits = runner.forward(params.data(), btok.data(), B, L);
    TeacherTopK teacher{static_cast<int>(k), bids.data(), blog.data(), blse.data()};
    const double loss = distill_loss(o.loss, logits.data(), teacher, B * L, V, dlogits.data());
    runner.backward(params.data(), dlogits.data(), grad.data());
    clip_grad_norm(grad.data(), layout.total, o.clip);
    const float lr = cosine_lr(step, o.steps, o.warmup, o.lr, o.lr * o.min_lr_ratio);
    opt.step(params.data(), grad.data(), lr, decay);
    recent.push_back(loss);
    if (recent.size() > 20) recent.erase(recent.begin());

    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t done = step + 1 - start;
    const double tps = elapsed > 0 ? static_cast<double>(done) * B * L / elapsed : 0;
    if (o.progress && (step + 1 == o.steps || done % 5 == 0 || done == 1)) {
      const double eta = done > 0 ? elapsed / done * static_cast<double>(o.steps - step - 1) : 0;
      const int width = 24, filled = static_cast<int>(width * (step + 1) / o.steps);
      std::fprintf(stderr, "\r[%s%s] step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  ETA %s   ",
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                   static_cast<long long>(step + 1), static_cast<long long>(o.steps), loss, lr, tps,
                   format_duration(eta).c_str());
    }
    if (!o.checkpoint.empty() && o.checkpoint_every > 0 &&
        ((step + 1) % o.checkpoint_every == 0 || step + 1 == o.steps))
      SF_RETURN_IF_ERROR(save_checkpoint(o.checkpoint, header_for(c, data, o, step + 1, layout.total), params, opt));
    result.seconds = elapsed;
    result.tokens_per_s = tps;
    if (o.stop_after > 0 && step + 1 >= o.stop_after) {
      if (!o.checkpoint.empty())
        SF_RETURN_IF_ERROR(save_checkpoint(o.checkpoint, header_for(c, data, o, step + 1, layout.total), params, opt));
      break;
    }
  }
  if (o.progress) std::fprintf(stderr, "\n");
  for (double l : recent) result.final_loss += l / static_cast<double>(recent.size());
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
