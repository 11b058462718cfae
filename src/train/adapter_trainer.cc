#include "train/adapter_trainer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "base/fnv1a.h"
#include "base/timer.h"
#include "engine/session.h"
#include "spec/exit_scorer.h"
#include "train/distill.h"
#include "train/train_loop.h"
#include "train/train_ops.h"

namespace sf::train {

namespace {

// Activations of one forward pass over n = n_win * seq_len rows, kept for backward.
struct Acts {
  std::vector<float> a, rstd1, q, k, v, probs, att, x, y, rstd2, z, rstd3, logits;
  std::vector<int32_t> positions;
};

void forward(const AdapterLayout& l, const float* P, const ExitHead& head, const float* h, int64_t n_win, int seq_len,
             Acts& s, ThreadPool& pool) {
  const int64_t n = n_win * seq_len, E = l.n_embd, qd = l.q_dim(), kd = l.kv_dim(), V = head.n_vocab;
  s.a.resize(n * E);
  s.rstd1.resize(n);
  s.q.resize(n * qd);
  s.k.resize(n * kd);
  s.v.resize(n * kd);
  s.probs.resize(n_win * l.n_head * static_cast<int64_t>(seq_len) * seq_len);
  s.att.resize(n * qd);
  s.x.resize(n * E);
  s.y.resize(n * E);
  s.rstd2.resize(n);
  s.z.resize(n * E);
  s.rstd3.resize(n);
  s.logits.resize(n * V);
  s.positions.resize(n);
  for (int64_t t = 0; t < n; ++t) s.positions[t] = static_cast<int32_t>(t % seq_len);
  rms_norm_forward(h, P + l.attn_norm(), l.rms_eps, n, E, s.a.data(), s.rstd1.data());
  linear_forward(s.a.data(), P + l.wq(), n, E, qd, s.q.data(), &pool);
  linear_forward(s.a.data(), P + l.wk(), n, E, kd, s.k.data(), &pool);
  linear_forward(s.a.data(), P + l.wv(), n, E, kd, s.v.data(), &pool);
  rope_forward(s.q.data(), s.positions.data(), n, l.n_head, l.head_dim, l.rope_base);
  rope_forward(s.k.data(), s.positions.data(), n, l.n_head_kv, l.head_dim, l.rope_base);
  const AttentionShape shape{n_win, seq_len, l.n_head, l.n_head_kv, l.head_dim};
  attention_forward(shape, s.q.data(), s.k.data(), s.v.data(), s.att.data(), s.probs.data(), &pool);
  linear_forward(s.att.data(), P + l.wo(), n, qd, E, s.x.data(), &pool);
  for (int64_t i = 0; i < n * E; ++i) s.x[i] += h[i];
  rms_norm_forward(s.x.data(), P + l.out_norm(), l.rms_eps, n, E, s.y.data(), s.rstd2.data());
  // The frozen head: the target's final norm, then its LM head.
  rms_norm_forward(s.y.data(), head.params.data(), head.rms_eps, n, E, s.z.data(), s.rstd3.data());
  linear_forward(s.z.data(), head.params.data() + E, n, E, V, s.logits.data(), &pool);
}

// G [l.total()] (overwritten): the gradient of the loss whose d/dlogits is dlogits.
void backward(const AdapterLayout& l, const float* P, const ExitHead& head, const float* h, int64_t n_win, int seq_len,
              const Acts& s, const float* dlogits, float* G, ThreadPool& pool) {
  const int64_t n = n_win * seq_len, E = l.n_embd, qd = l.q_dim(), kd = l.kv_dim(), V = head.n_vocab;
  std::fill(G, G + l.total(), 0.0f);
  // dz = dlogits . W (the head's own gradient is not needed: it is frozen).
  std::vector<float> dz(n * E, 0.0f);
  const float* W = head.params.data() + E;
  pool.parallel_for(n, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t)
      for (int64_t o = 0; o < V; ++o) {
        const float g = dlogits[t * V + o];
        if (g != 0.0f) detail::axpy(g, W + o * E, dz.data() + t * E, E);
      }
  });
  std::vector<float> dy(n * E, 0.0f), dnorm_scratch(E, 0.0f), dx(n * E, 0.0f);
  rms_norm_backward(dz.data(), s.y.data(), head.params.data(), s.rstd3.data(), n, E, dy.data(), dnorm_scratch.data());
  rms_norm_backward(dy.data(), s.x.data(), P + l.out_norm(), s.rstd2.data(), n, E, dx.data(), G + l.out_norm());
  std::vector<float> datt(n * qd, 0.0f);
  linear_backward(dx.data(), s.att.data(), P + l.wo(), n, qd, E, datt.data(), G + l.wo(), &pool);
  std::vector<float> dq(n * qd, 0.0f), dk(n * kd, 0.0f), dv(n * kd, 0.0f);
  const AttentionShape shape{n_win, seq_len, l.n_head, l.n_head_kv, l.head_dim};
  attention_backward(shape, datt.data(), s.q.data(), s.k.data(), s.v.data(), s.probs.data(), dq.data(), dk.data(),
                     dv.data(), &pool);
  rope_backward(dq.data(), s.positions.data(), n, l.n_head, l.head_dim, l.rope_base);
  rope_backward(dk.data(), s.positions.data(), n, l.n_head_kv, l.head_dim, l.rope_base);
  std::vector<float> da(n * E, 0.0f);
  linear_backward(dq.data(), s.a.data(), P + l.wq(), n, E, qd, da.data(), G + l.wq(), &pool);
  linear_backward(dk.data(), s.a.data(), P + l.wk(), n, E, kd, da.data(), G + l.wk(), &pool);
  linear_backward(dv.data(), s.a.data(), P + l.wv(), n, E, kd, da.data(), G + l.wv(), &pool);
  std::vector<float> dh(n * E, 0.0f);
  rms_norm_backward(da.data(), h, P + l.attn_norm(), s.rstd1.data(), n, E, dh.data(), G + l.attn_norm());
}

}  // namespace

void adapter_logits(const AdapterLayout& layout, const std::vector<float>& params, const ExitHead& head,
                    const float* hidden, int64_t n_win, int seq_len, std::vector<float>& logits, ThreadPool& pool) {
  Acts s;
  forward(layout, params.data(), head, hidden, n_win, seq_len, s, pool);
  logits = std::move(s.logits);
}

Result<AdapterTrainResult> train_adapter(const AdapterLayout& l, std::vector<float>& params, const ExitHead& head,
                                         const std::vector<float>& hidden, const TeacherData& t,
                                         const AdapterTrainOptions& o, ThreadPool& pool) {
  const int L = t.seq_len, k = t.k;
  const int64_t E = l.n_embd, V = head.n_vocab, n_win = t.n_windows();
  SF_CHECK(n_win > 0 && static_cast<int64_t>(hidden.size()) == n_win * L * E);
  SF_CHECK(static_cast<int64_t>(params.size()) == l.total());
  const int64_t B = std::min<int64_t>(o.batch_windows, n_win), n = B * L;
  std::vector<float> x(n * E), dlogits(n * V), tl(n * k), lse(n);
  std::vector<int32_t> ids(n * k);
  BatchSampler sampler(o.seed, n_win, B);
  Acts s;
  LoopOptions lo = head_loop_options(o.steps, o.lr, o.clip, "train-adapter");
  lo.checkpoint = o.checkpoint;
  lo.checkpoint_every = o.checkpoint_every;
  lo.resume = o.resume;
  lo.stop_after = o.stop_after;
  lo.identity = o.identity;
  lo.progress = o.progress;
  lo.tokens_per_step = n;
  SF_ASSIGN_OR_RETURN(LoopResult loop,
                      run_train_loop(params, std::vector<uint8_t>(params.size(), 0), lo,
                                     [&](int64_t step, const float* P, float* grad) {
                                       const std::vector<int64_t>& windows = sampler.batch(step);
                                       for (int64_t b = 0; b < B; ++b) {
                                         const int64_t w = windows[b];
                                         std::copy_n(hidden.begin() + w * L * E, L * E, x.begin() + b * L * E);
                                         std::copy_n(t.ids.begin() + w * L * k, L * k, ids.begin() + b * L * k);
                                         std::copy_n(t.logits.begin() + w * L * k, L * k, tl.begin() + b * L * k);
                                         std::copy_n(t.lse.begin() + w * L, L, lse.begin() + b * L);
                                       }
                                       forward(l, P, head, x.data(), B, L, s, pool);
                                       const TeacherTopK view{k, ids.data(), tl.data(), lse.data()};
                                       const double loss =
                                           distill_loss(o.loss, s.logits.data(), view, n, V, dlogits.data());
                                       backward(l, P, head, x.data(), B, L, s, dlogits.data(), grad, pool);
                                       return loss;
                                     }));
  return AdapterTrainResult{loop.final_loss, loop.resumed_from, loop.last_step};
}

double adapter_top1(const AdapterLayout& l, const std::vector<float>& params, const ExitHead& head,
                    const std::vector<float>& hidden, const TeacherData& t, ThreadPool& pool) {
  const int L = t.seq_len;
  const int64_t E = l.n_embd, V = head.n_vocab, n_win = t.n_windows();
  int64_t hits = 0;
  std::vector<float> logits;
  for (int64_t w0 = 0; w0 < n_win; w0 += 16) {
    const int64_t nw = std::min<int64_t>(16, n_win - w0);
    adapter_logits(l, params, head, hidden.data() + w0 * L * E, nw, L, logits, pool);
    for (int64_t r = 0; r < nw * L; ++r) {
      const float* row = logits.data() + r * V;
      hits += (std::max_element(row, row + V) - row) == t.ids[(w0 * L + r) * t.k];
    }
  }
  return n_win > 0 ? static_cast<double>(hits) / static_cast<double>(n_win * L) : 0.0;
}

namespace {

// What a checkpoint must share with the run resuming it: the target, the adapter's role and
// layer, the training rows (their tokens' hash), the teacher's K, the batch and the seed.
CheckpointIdentity adapter_checkpoint_identity(const Model& target, const AdapterPipelineOptions& o,
                                               const TeacherData& t) {
  char data[32];
  std::snprintf(data, sizeof(data), "%016" PRIx64, fnv1a(t.tokens.data(), t.tokens.size() * sizeof(int32_t)));
  return {{"trainer", "train-adapter"},
          {"target", model_fingerprint(target)},
          {"role", adapter_role_name(o.role)},
          {"layer", std::to_string(o.layer)},
          {"data", data},
          {"seq-len", std::to_string(o.seq_len)},
          {"top-k", std::to_string(o.top_k)},
          {"batch", std::to_string(o.train.batch_windows)},
          {"seed", std::to_string(o.train.seed)}};
}

}  // namespace

Result<AdapterReport> run_train_adapter(const AdapterPipelineOptions& o) {
  if (o.out_path.empty()) return Status::Error("train-adapter: give the output file with -o");
  if (o.data.empty() && o.train.steps > 0) return Status::Error("train-adapter: give training text with --data");
  Stopwatch timer;
  SessionOptions so;
  so.model_path = o.target_path;
  so.n_threads = o.n_threads;
  so.n_ctx = o.seq_len;
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Session> target, Session::create(so));
  const ModelHParams& hp = target->model().hparams();
  if (o.layer < 1 || o.layer >= hp.n_layer)
    return Status::Errorf("--layer %d is outside the model: %s has %d layers (choose 1..%d)", o.layer,
                          o.target_path.c_str(), hp.n_layer, hp.n_layer - 1);
  if (o.train.steps == 0) {  // the initial adapter: no data needed
    AdapterReport rep;
    const AdapterLayout layout = AdapterLayout::for_model(target->model());
    rep.parameters = layout.total();
    SF_RETURN_IF_ERROR(
        save_adapter(o.out_path, target->model(), o.role, o.layer, init_adapter_params(layout, o.train.seed)));
    rep.seconds = timer.elapsed();
    return rep;
  }
  SF_ASSIGN_OR_RETURN(std::vector<std::string> stories, read_stories(o.data));
  std::vector<int32_t> stream;
  for (const std::string& text : stories) {
    SF_ASSIGN_OR_RETURN(std::vector<int32_t> ids, target->tokenize(text, false));
    stream.insert(stream.end(), ids.begin(), ids.end());
    if (static_cast<int64_t>(stream.size()) >= static_cast<int64_t>(o.max_windows) * o.seq_len) break;
  }
  const int64_t n_win = std::min<int64_t>(o.max_windows, static_cast<int64_t>(stream.size()) / o.seq_len);
  const int64_t n_held = std::max<int64_t>(1, n_win / 10), n_train = n_win - n_held;
  if (n_train < 1)
    return Status::Errorf("train-adapter: %lld tokens of text make too few %d-token windows; give more --data",
                          static_cast<long long>(stream.size()), o.seq_len);
  const std::vector<int32_t> train_win(stream.begin(), stream.begin() + n_train * o.seq_len);
  const std::vector<int32_t> held_win(stream.begin() + n_train * o.seq_len, stream.begin() + n_win * o.seq_len);
  TeacherData t_train, t_held;
  SF_RETURN_IF_ERROR(compute_teacher_signal(*target, train_win, o.seq_len, o.top_k, &t_train, o.train.progress, "train",
                                            "train-adapter"));
  SF_RETURN_IF_ERROR(compute_teacher_signal(*target, held_win, o.seq_len, o.top_k, &t_held, false, ""));
  ThreadPool& pool = target->pool();
  const Model& model = target->model();
  const std::vector<float> h_train = target_hidden_states(model, train_win, o.seq_len, o.layer, pool);
  const std::vector<float> h_held = target_hidden_states(model, held_win, o.seq_len, o.layer, pool);
  const ExitHead head = exit_head_from_model(model);
  const AdapterLayout layout = AdapterLayout::for_model(model);
  std::vector<float> params = init_adapter_params(layout, o.train.seed);

  AdapterReport rep;
  rep.train_rows = static_cast<int64_t>(t_train.tokens.size());
  rep.heldout_rows = static_cast<int64_t>(t_held.tokens.size());
  rep.parameters = layout.total();
  rep.heldout_top1_before = adapter_top1(layout, params, head, h_held, t_held, pool);
  AdapterTrainOptions train = o.train;
  train.identity = adapter_checkpoint_identity(model, o, t_train);
  SF_ASSIGN_OR_RETURN(AdapterTrainResult trained, train_adapter(layout, params, head, h_train, t_train, train, pool));
  rep.loss = trained.final_loss;
  rep.resumed_from = trained.resumed_from;
  rep.steps_done = trained.last_step;
  rep.heldout_top1_after = adapter_top1(layout, params, head, h_held, t_held, pool);
  SF_RETURN_IF_ERROR(save_adapter(o.out_path, model, o.role, o.layer, params));
  rep.seconds = timer.elapsed();
  return rep;
}

}  // namespace sf::train
