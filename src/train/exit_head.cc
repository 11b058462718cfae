#include "train/exit_head.h"

#include <algorithm>

#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/transformer.h"
#include "quant/dequantize.h"
#include "train/train_loop.h"
#include "train/train_ops.h"

namespace sf::train {

std::vector<float> target_hidden_states(const Model& model, const std::vector<int32_t>& windows, int seq_len, int layer,
                                        ThreadPool& pool) {
  const ModelHParams& hp = model.hparams();
  SF_CHECK(layer >= 0 && layer <= hp.n_layer && seq_len > 0);
  Transformer tr(hp, pool);
  KvCache cache(hp.n_layer, seq_len, hp.n_head_kv, hp.head_dim);
  const int64_t n_win = static_cast<int64_t>(windows.size()) / seq_len;
  std::vector<float> hidden(static_cast<size_t>(n_win) * seq_len * hp.n_embd);
  for (int64_t w = 0; w < n_win; ++w) {
    std::vector<int32_t> toks(windows.begin() + w * seq_len, windows.begin() + (w + 1) * seq_len);
    float* h = hidden.data() + static_cast<size_t>(w) * seq_len * hp.n_embd;
    tr.embed(model.weights(), toks.data(), seq_len, h);
    tr.run_layers(model.weights(), ForwardBatch::causal(toks, 0), 0, layer, cache, h);
  }
  return hidden;
}

ExitHead exit_head_from_model(const Model& model) {
  const ModelHParams& hp = model.hparams();
  ExitHead head;
  head.n_embd = hp.n_embd;
  head.n_vocab = hp.n_vocab;
  head.rms_eps = hp.rms_eps;
  head.params.resize(static_cast<size_t>(hp.n_embd) * (1 + hp.n_vocab));
  std::copy_n(model.weights().output_norm, hp.n_embd, head.params.begin());
  const WeightMatrix& out = model.weights().output;
  for (int v = 0; v < hp.n_vocab; ++v)
    dequantize_weight_row(out, v, head.params.data() + hp.n_embd * (1 + static_cast<size_t>(v)));
  return head;
}

void exit_head_forward(const ExitHead& head, const float* x, int64_t n, std::vector<float>& xn,
                       std::vector<float>& rstd, std::vector<float>& logits, ThreadPool& pool) {
  const int64_t E = head.n_embd, V = head.n_vocab;
  xn.resize(n * E);
  rstd.resize(n);
  logits.resize(n * V);
  rms_norm_forward(x, head.params.data(), head.rms_eps, n, E, xn.data(), rstd.data());
  linear_forward(xn.data(), head.params.data() + E, n, E, V, logits.data(), &pool);
}

void exit_head_backward(const ExitHead& head, const float* x, const std::vector<float>& xn,
                        const std::vector<float>& rstd, const float* dlogits, int64_t n, float* grad,
                        ThreadPool& pool) {
  const int64_t E = head.n_embd, V = head.n_vocab;
  std::vector<float> dxn(n * E, 0.0f), dx(n * E, 0.0f);
  std::fill(grad, grad + head.params.size(), 0.0f);
  linear_backward(dlogits, xn.data(), head.params.data() + E, n, E, V, dxn.data(), grad + E, &pool);
  rms_norm_backward(dxn.data(), x, head.params.data(), rstd.data(), n, E, dx.data(), grad);
}

double train_exit_head(ExitHead& head, const std::vector<float>& hidden, const TeacherData& t,
                       const ExitHeadTrainOptions& o, ThreadPool& pool) {
  const int64_t E = head.n_embd, V = head.n_vocab, k = t.k;
  const int64_t rows = static_cast<int64_t>(t.tokens.size());
  SF_CHECK(static_cast<int64_t>(hidden.size()) == rows * E && rows > 0);
  const int64_t B = std::min<int64_t>(o.batch_rows, rows);
  std::vector<uint8_t> decay(head.params.size(), 1);
  std::fill_n(decay.begin(), E, 0);  // the norm is not decayed
  std::vector<float> x(B * E), xn, rstd, logits, dlogits(B * V);
  std::vector<int32_t> ids(B * k);
  std::vector<float> tl(B * k), lse(B);
  BatchSampler sampler(o.seed, rows, B);
  LoopOptions lo = head_loop_options(o.steps, o.lr, o.clip, "train");
  lo.weight_decay = o.weight_decay;
  auto loop = run_train_loop(head.params, decay, lo, [&](int64_t step, const float*, float* grad) {
    const std::vector<int64_t>& picked = sampler.batch(step);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t r = picked[b];
      std::copy_n(hidden.begin() + r * E, E, x.begin() + b * E);
      std::copy_n(t.ids.begin() + r * k, k, ids.begin() + b * k);
      std::copy_n(t.logits.begin() + r * k, k, tl.begin() + b * k);
      lse[b] = t.lse[r];
    }
    exit_head_forward(head, x.data(), B, xn, rstd, logits, pool);
    TeacherTopK view{static_cast<int>(k), ids.data(), tl.data(), lse.data()};
    const double loss = distill_loss(o.loss, logits.data(), view, B, V, dlogits.data());
    exit_head_backward(head, x.data(), xn, rstd, dlogits.data(), B, grad, pool);
    return loss;
  });
  SF_CHECK(loop.ok());  // no checkpoint file: nothing in the loop can fail
  return loop->last_loss;
}

double exit_head_top1(const ExitHead& head, const std::vector<float>& hidden, const TeacherData& t, ThreadPool& pool) {
  const int64_t V = head.n_vocab, rows = static_cast<int64_t>(t.tokens.size());
  std::vector<float> xn, rstd, logits;
  exit_head_forward(head, hidden.data(), rows, xn, rstd, logits, pool);
  int64_t hits = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = logits.data() + r * V;
    hits += (std::max_element(row, row + V) - row) == t.ids[r * t.k];
  }
  return rows > 0 ? static_cast<double>(hits) / static_cast<double>(rows) : 0.0;
}

}  // namespace sf::train
