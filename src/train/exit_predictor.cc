#include "train/exit_predictor.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "engine/session.h"
#include "spec/exit_scorer.h"
#include "train/distill.h"
#include "train/train_loop.h"
#include "train/train_ops.h"

namespace sf::train {
namespace {

// Teacher logit of `id` at a row: from the top-K, else the K-th logit (see the header).
float teacher_logit(const int32_t* ids, const float* logits, int k, int32_t id) {
  for (int i = 0; i < k; ++i)
    if (ids[i] == id) return logits[i];
  return logits[k - 1];
}

// Softmax of `x` (n values) at temperature tau into p; returns nothing.
void softmax_t(const float* x, int n, float tau, double* p) {
  double max = -1e300, sum = 0;
  for (int i = 0; i < n; ++i) max = std::max(max, static_cast<double>(x[i]) / tau);
  for (int i = 0; i < n; ++i) sum += p[i] = std::exp(static_cast<double>(x[i]) / tau - max);
  for (int i = 0; i < n; ++i) p[i] /= sum;
}

// Loss and dL/dlogits of one row (eq. 8-10). s: [V] student logits.
double row_loss(const float* s, int64_t V, const int32_t* tids, const float* tlog, int k, const int32_t* cand, int kc,
                const PredictorTrainOptions& o, float* ds) {
  double loss = 0;
  std::vector<double> ps(static_cast<size_t>(V)), pt(static_cast<size_t>(k));
  // KD over the full vocabulary, teacher = its top-K renormalised at tau_kd.
  softmax_t(s, static_cast<int>(V), o.tau_kd, ps.data());
  softmax_t(tlog, k, o.tau_kd, pt.data());
  const double t2 = static_cast<double>(o.tau_kd) * o.tau_kd;
  for (int64_t v = 0; v < V; ++v) ds[v] = static_cast<float>(t2 / o.tau_kd * ps[v]);
  for (int i = 0; i < k; ++i) {
    loss += t2 * pt[i] * (std::log(std::max(pt[i], 1e-30)) - std::log(std::max(ps[tids[i]], 1e-30)));
    ds[tids[i]] -= static_cast<float>(t2 / o.tau_kd * pt[i]);
  }
  // Candidate-set KL at tau_cand.
  if (kc > 0 && o.lambda_cand > 0) {
    std::vector<float> zs(kc), zt(kc);
    std::vector<double> qs(kc), qt(kc);
    for (int i = 0; i < kc; ++i) {
      zs[i] = s[cand[i]];
      zt[i] = teacher_logit(tids, tlog, k, cand[i]);
    }
    softmax_t(zs.data(), kc, o.tau_cand, qs.data());
    softmax_t(zt.data(), kc, o.tau_cand, qt.data());
    const double c2 = static_cast<double>(o.tau_cand) * o.tau_cand * o.lambda_cand;
    for (int i = 0; i < kc; ++i) {
      loss += c2 * qt[i] * (std::log(std::max(qt[i], 1e-30)) - std::log(std::max(qs[i], 1e-30)));
      ds[cand[i]] += static_cast<float>(c2 / o.tau_cand * (qs[i] - qt[i]));
    }
  }
  return loss;
}

}  // namespace

double train_predictor(ExitHead& head, const std::vector<float>& hidden, const TeacherData& t,
                       const std::vector<int32_t>& candidates, int kc, const PredictorTrainOptions& o,
                       ThreadPool& pool) {
  const int64_t E = head.n_embd, V = head.n_vocab, k = t.k;
  const int64_t rows = static_cast<int64_t>(t.tokens.size());
  SF_CHECK(static_cast<int64_t>(hidden.size()) == rows * E && rows > 0);
  SF_CHECK(static_cast<int64_t>(candidates.size()) == rows * kc);
  const int64_t B = std::min<int64_t>(o.batch_rows, rows);
  std::vector<float> x(B * E), xn, rstd, logits, dlogits(B * V);
  BatchSampler sampler(o.seed, rows, B);
  LoopOptions lo = head_loop_options(o.steps, o.lr, o.clip, "train-predictor");
  auto loop = run_train_loop(
      head.params, std::vector<uint8_t>(head.params.size(), 0), lo, [&](int64_t step, const float*, float* grad) {
        const std::vector<int64_t>& picked = sampler.batch(step);
        for (int64_t b = 0; b < B; ++b) std::copy_n(hidden.begin() + picked[b] * E, E, x.begin() + b * E);
        exit_head_forward(head, x.data(), B, xn, rstd, logits, pool);
        double loss = 0;
        for (int64_t b = 0; b < B; ++b) {
          const int64_t r = picked[b];
          loss += row_loss(logits.data() + b * V, V, t.ids.data() + r * k, t.logits.data() + r * k, static_cast<int>(k),
                           candidates.data() + r * kc, kc, o, dlogits.data() + b * V);
        }
        for (float& g : dlogits) g /= static_cast<float>(B);
        exit_head_backward(head, x.data(), xn, rstd, dlogits.data(), B, grad, pool);
        return loss / static_cast<double>(B);
      });
  SF_CHECK(loop.ok());  // no checkpoint file: nothing in the loop can fail
  return loop->last_loss;
}

double candidate_agreement(const ExitHead& head, const std::vector<float>& hidden, const TeacherData& t,
                           const std::vector<int32_t>& candidates, int kc, ThreadPool& pool) {
  const int64_t V = head.n_vocab, rows = static_cast<int64_t>(t.tokens.size());
  std::vector<float> xn, rstd, logits;
  exit_head_forward(head, hidden.data(), rows, xn, rstd, logits, pool);
  int64_t hits = 0, counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* c = candidates.data() + r * kc;
    const int32_t top = t.ids[r * t.k];
    if (std::find(c, c + kc, top) == c + kc) continue;
    const float* row = logits.data() + r * V;
    int32_t best = c[0];
    for (int i = 1; i < kc; ++i)
      if (row[c[i]] > row[best]) best = c[i];
    ++counted;
    hits += best == top ? 1 : 0;
  }
  return counted > 0 ? static_cast<double>(hits) / static_cast<double>(counted) : 0.0;
}

}  // namespace sf::train

namespace sf::train {
namespace {

// The draft's top-kc ids at every position of every window (each window from position 0).
Result<std::vector<int32_t>> draft_candidates(const std::string& draft_path, const std::vector<int32_t>& windows,
                                              int seq_len, int kc, int n_threads) {
  SessionOptions so;
  so.model_path = draft_path;
  so.n_threads = n_threads;
  so.n_ctx = seq_len;
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Session> draft, Session::create(so));
  const int V = draft->model().hparams().n_vocab;
  std::vector<int32_t> out;
  std::vector<float> logits;
  std::vector<int32_t> ids(static_cast<size_t>(V));
  for (size_t w = 0; w + seq_len <= windows.size(); w += seq_len) {
    draft->reset();
    SF_RETURN_IF_ERROR(draft->evaluate({windows.begin() + w, windows.begin() + w + seq_len}, true, &logits));
    for (int p = 0; p < seq_len; ++p) {
      const float* row = logits.data() + static_cast<size_t>(p) * V;
      for (int i = 0; i < V; ++i) ids[i] = i;
      std::partial_sort(ids.begin(), ids.begin() + kc, ids.end(),
                        [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
      out.insert(out.end(), ids.begin(), ids.begin() + kc);
    }
  }
  return out;
}

std::vector<int32_t> teacher_candidates(const TeacherData& t, int kc) {
  std::vector<int32_t> out;
  for (size_t r = 0; r < t.tokens.size(); ++r)
    out.insert(out.end(), t.ids.begin() + r * t.k, t.ids.begin() + r * t.k + kc);
  return out;
}

}  // namespace

Result<PredictorReport> run_train_predictor(const PredictorPipelineOptions& o) {
  if (o.out_path.empty()) return Status::Error("train-predictor: give the output file with -o");
  if (o.data.empty()) return Status::Error("train-predictor: give training text with --data");
  SessionOptions so;
  so.model_path = o.target_path;
  so.n_threads = o.n_threads;
  so.n_ctx = o.seq_len;
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Session> target, Session::create(so));
  const ModelHParams& hp = target->model().hparams();
  PredictorReport rep;
  rep.layer = o.layer < 0 ? hp.n_layer / 2 : o.layer;
  if (rep.layer < 1 || rep.layer >= hp.n_layer)
    return Status::Errorf("--layer %d is outside the model: %s has %d layers (choose 1..%d)", rep.layer,
                          o.target_path.c_str(), hp.n_layer, hp.n_layer - 1);
  if (o.candidates < 2 || o.candidates > o.top_k)
    return Status::Errorf("--candidates %d must be in 2..--top-k (%d)", o.candidates, o.top_k);

  SF_ASSIGN_OR_RETURN(std::vector<std::string> stories, read_stories(o.data));
  std::vector<int32_t> stream;
  for (const std::string& s : stories) {
    SF_ASSIGN_OR_RETURN(std::vector<int32_t> ids, target->tokenize(s, false));
    stream.insert(stream.end(), ids.begin(), ids.end());
    if (static_cast<int64_t>(stream.size()) >= static_cast<int64_t>(o.max_windows) * o.seq_len) break;
  }
  const int64_t n_win = std::min<int64_t>(o.max_windows, static_cast<int64_t>(stream.size()) / o.seq_len);
  const int64_t n_held = std::max<int64_t>(1, n_win / 10), n_train = n_win - n_held;
  if (n_train < 1)
    return Status::Errorf("train-predictor: %lld tokens of text make too few %d-token windows; give more --data",
                          static_cast<long long>(stream.size()), o.seq_len);
  const std::vector<int32_t> train_win(stream.begin(), stream.begin() + n_train * o.seq_len);
  const std::vector<int32_t> held_win(stream.begin() + n_train * o.seq_len, stream.begin() + n_win * o.seq_len);

  TeacherData t_train, t_held;
  SF_RETURN_IF_ERROR(
      compute_teacher_signal(*target, train_win, o.seq_len, o.top_k, &t_train, o.progress, "train", "train-predictor"));
  SF_RETURN_IF_ERROR(compute_teacher_signal(*target, held_win, o.seq_len, o.top_k, &t_held, false, ""));
  std::vector<int32_t> c_train, c_held;
  if (!o.draft_path.empty()) {
    SF_ASSIGN_OR_RETURN(c_train, draft_candidates(o.draft_path, train_win, o.seq_len, o.candidates, o.n_threads));
    SF_ASSIGN_OR_RETURN(c_held, draft_candidates(o.draft_path, held_win, o.seq_len, o.candidates, o.n_threads));
  } else {
    c_train = teacher_candidates(t_train, o.candidates);
    c_held = teacher_candidates(t_held, o.candidates);
  }
  ThreadPool& pool = target->pool();
  const Model& model = target->model();
  const std::vector<float> h_train = target_hidden_states(model, train_win, o.seq_len, rep.layer, pool);
  const std::vector<float> h_held = target_hidden_states(model, held_win, o.seq_len, rep.layer, pool);
  rep.train_rows = static_cast<int64_t>(t_train.tokens.size());
  rep.heldout_rows = static_cast<int64_t>(t_held.tokens.size());

  ExitHead head = exit_head_from_model(model);  // the logit lens
  rep.heldout_agreement_before = candidate_agreement(head, h_held, t_held, c_held, o.candidates, pool);
  rep.heldout_top1_before = exit_head_top1(head, h_held, t_held, pool);
  rep.loss = train_predictor(head, h_train, t_train, c_train, o.candidates, o.train, pool);
  rep.heldout_agreement_after = candidate_agreement(head, h_held, t_held, c_held, o.candidates, pool);
  rep.heldout_top1_after = exit_head_top1(head, h_held, t_held, pool);

  const int64_t E = hp.n_embd;
  const std::vector<float> norm(head.params.begin(), head.params.begin() + E);
  const std::vector<float> weight(head.params.begin() + E, head.params.end());
  SF_RETURN_IF_ERROR(LinearPredictorScorer::save(o.out_path, model, rep.layer, norm, weight));
  return rep;
}

}  // namespace sf::train
