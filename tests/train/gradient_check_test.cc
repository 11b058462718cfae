// Every backward op of src/train against central finite differences, in double, on tiny
// random shapes, and the whole draft model's gradient. Bound: for each input element,
// |analytic - numeric| <= 1e-6 * max(1, max|analytic|) (h = 1e-5; the central difference
// error is O(h^2) ~ 1e-10 plus rounding ~ 1e-11 / h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "train/draft_model.h"
#include "train/train_ops.h"

namespace sf::train {
namespace {

using Vec = std::vector<double>;

Vec random_vec(std::mt19937& rng, size_t n, double scale = 1.0) {
  std::normal_distribution<double> d(0.0, scale);
  Vec v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

// Compares grad (analytic d loss / d x) with central differences of loss() over x.
void expect_grad(const char* what, Vec& x, const Vec& grad, const std::function<double()>& loss) {
  ASSERT_EQ(x.size(), grad.size());
  const double h = 1e-5;
  double max_abs = 1.0;
  for (double g : grad) max_abs = std::max(max_abs, std::fabs(g));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double lp = loss();
    x[i] = saved - h;
    const double lm = loss();
    x[i] = saved;
    const double num = (lp - lm) / (2 * h);
    worst = std::max(worst, std::fabs(num - grad[i]) / max_abs);
  }
  EXPECT_LT(worst, 1e-6) << what;
}

double weighted_sum(const Vec& y, const Vec& r) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
  return s;
}

TEST(GradientCheck, Embedding) {
  std::mt19937 rng(1);
  const int V = 7, E = 5, n = 6;
  Vec table = random_vec(rng, V * E);
  std::vector<int32_t> tok = {1, 3, 1, 6, 0, 3};
  Vec r = random_vec(rng, n * E);
  auto loss = [&] {
    Vec y(n * E);
    embedding_forward(table.data(), tok.data(), n, E, y.data());
    return weighted_sum(y, r);
  };
  Vec g(V * E, 0.0);
  embedding_backward(r.data(), tok.data(), n, E, g.data());
  expect_grad("embedding", table, g, loss);
}

TEST(GradientCheck, RmsNorm) {
  std::mt19937 rng(2);
  const int n = 3, d = 7;
  Vec x = random_vec(rng, n * d), w = random_vec(rng, d), r = random_vec(rng, n * d);
  auto loss = [&] {
    Vec y(n * d), rs(n);
    rms_norm_forward(x.data(), w.data(), 1e-5, n, d, y.data(), rs.data());
    return weighted_sum(y, r);
  };
  Vec y(n * d), rs(n), gx(n * d, 0.0), gw(d, 0.0);
  rms_norm_forward(x.data(), w.data(), 1e-5, n, d, y.data(), rs.data());
  rms_norm_backward(r.data(), x.data(), w.data(), rs.data(), n, d, gx.data(), gw.data());
  expect_grad("rms_norm dx", x, gx, loss);
  expect_grad("rms_norm dw", w, gw, loss);
}

TEST(GradientCheck, Linear) {
  std::mt19937 rng(3);
  const int n = 4, in = 5, out = 3;
  Vec x = random_vec(rng, n * in), W = random_vec(rng, out * in), r = random_vec(rng, n * out);
  ThreadPool pool(2);
  auto loss = [&] {
    Vec y(n * out);
    linear_forward(x.data(), W.data(), n, in, out, y.data(), &pool);
    return weighted_sum(y, r);
  };
  Vec gx(n * in, 0.0), gW(out * in, 0.0);
  linear_backward(r.data(), x.data(), W.data(), n, in, out, gx.data(), gW.data(), &pool);
  expect_grad("linear dx", x, gx, loss);
  expect_grad("linear dW", W, gW, loss);
}

TEST(GradientCheck, Rope) {
  std::mt19937 rng(4);
  const int n = 5, H = 2, hd = 6;
  std::vector<int32_t> pos = {0, 1, 2, 7, 30};
  Vec x = random_vec(rng, n * H * hd), r = random_vec(rng, n * H * hd);
  auto loss = [&] {
    Vec y = x;
    rope_forward(y.data(), pos.data(), n, H, hd, 10000.0);
    return weighted_sum(y, r);
  };
  Vec g = r;
  rope_backward(g.data(), pos.data(), n, H, hd, 10000.0);
  expect_grad("rope", x, g, loss);
}

TEST(GradientCheck, CausalAttentionGqa) {
  std::mt19937 rng(5);
  AttentionShape s{2, 4, 4, 2, 3};  // 2 sequences of 4 rows, 4 query heads sharing 2 kv heads
  const int64_t n = s.n_seq * s.seq_len, qd = s.n_head * s.head_dim, kd = s.n_kv * s.head_dim;
  Vec q = random_vec(rng, n * qd), k = random_vec(rng, n * kd), v = random_vec(rng, n * kd),
      r = random_vec(rng, n * qd);
  ThreadPool pool(2);
  auto loss = [&] {
    Vec out(n * qd), P(s.n_seq * s.n_head * s.seq_len * s.seq_len);
    attention_forward(s, q.data(), k.data(), v.data(), out.data(), P.data(), &pool);
    return weighted_sum(out, r);
  };
  Vec out(n * qd), P(s.n_seq * s.n_head * s.seq_len * s.seq_len);
  attention_forward(s, q.data(), k.data(), v.data(), out.data(), P.data(), &pool);
  Vec gq(n * qd, 0.0), gk(n * kd, 0.0), gv(n * kd, 0.0);
  attention_backward(s, r.data(), q.data(), k.data(), v.data(), P.data(), gq.data(), gk.data(), gv.data(), &pool);
  expect_grad("attention dq", q, gq, loss);
  expect_grad("attention dk", k, gk, loss);
  expect_grad("attention dv", v, gv, loss);
}

TEST(GradientCheck, AttentionIsCausal) {
  std::mt19937 rng(6);
  AttentionShape s{1, 5, 2, 1, 4};
  const int64_t n = 5, qd = 8, kd = 4;
  Vec q = random_vec(rng, n * qd), k = random_vec(rng, n * kd), v = random_vec(rng, n * kd);
  Vec out(n * qd), P(2 * 25);
  attention_forward(s, q.data(), k.data(), v.data(), out.data(), P.data(), nullptr);
  Vec out2(n * qd);
  v[4 * kd + 1] += 10.0;  // changing the last row's value must not change earlier rows
  attention_forward(s, q.data(), k.data(), v.data(), out2.data(), P.data(), nullptr);
  for (int64_t i = 0; i < 4 * qd; ++i) EXPECT_EQ(out[i], out2[i]);
}

TEST(GradientCheck, SwiGlu) {
  std::mt19937 rng(7);
  const int n = 9;
  Vec g = random_vec(rng, n, 2.0), u = random_vec(rng, n), r = random_vec(rng, n);
  auto loss = [&] {
    Vec h(n);
    swiglu_forward(g.data(), u.data(), n, h.data());
    return weighted_sum(h, r);
  };
  Vec gg(n, 0.0), gu(n, 0.0);
  swiglu_backward(r.data(), g.data(), u.data(), n, gg.data(), gu.data());
  expect_grad("swiglu dg", g, gg, loss);
  expect_grad("swiglu du", u, gu, loss);
}

TEST(GradientCheck, CrossEntropy) {
  std::mt19937 rng(8);
  const int n = 3, V = 6;
  Vec logits = random_vec(rng, n * V, 2.0);
  std::vector<int32_t> tgt = {0, 5, 2};
  Vec d(n * V);
  auto loss = [&] {
    Vec tmp(n * V);
    return cross_entropy(logits.data(), tgt.data(), n, V, tmp.data());
  };
  cross_entropy(logits.data(), tgt.data(), n, V, d.data());
  expect_grad("cross_entropy", logits, d, loss);
}

// A teacher: top-k of random logits with the exact logsumexp.
struct FakeTeacher {
  std::vector<int32_t> ids;
  std::vector<float> logits, lse;
  TeacherTopK view(int k) const { return {k, ids.data(), logits.data(), lse.data()}; }
};
FakeTeacher make_teacher(std::mt19937& rng, int n, int V, int k) {
  FakeTeacher t;
  Vec full = random_vec(rng, n * V, 2.0);
  for (int r = 0; r < n; ++r) {
    std::vector<int32_t> order(V);
    for (int i = 0; i < V; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return full[r * V + a] > full[r * V + b]; });
    double mx = full[r * V + order[0]], s = 0;
    for (int i = 0; i < V; ++i) s += std::exp(full[r * V + i] - mx);
    t.lse.push_back(static_cast<float>(mx + std::log(s)));
    for (int j = 0; j < k; ++j) {
      t.ids.push_back(order[j]);
      t.logits.push_back(static_cast<float>(full[r * V + order[j]]));
    }
  }
  return t;
}

TEST(GradientCheck, ReducedKlAndFullKl) {
  std::mt19937 rng(9);
  const int n = 3, V = 8;
  for (DistillLoss kind : {DistillLoss::kReducedKl, DistillLoss::kFullKl}) {
    for (int k : {3, 8}) {
      FakeTeacher t = make_teacher(rng, n, V, k);
      Vec logits = random_vec(rng, n * V, 2.0);
      Vec d(n * V);
      auto loss = [&] {
        Vec tmp(n * V);
        return distill_loss(kind, logits.data(), t.view(k), n, V, tmp.data());
      };
      double l0 = distill_loss(kind, logits.data(), t.view(k), n, V, d.data());
      EXPECT_GE(l0, -1e-9);
      expect_grad(kind == DistillLoss::kReducedKl ? "reduced kl" : "full kl", logits, d, loss);
    }
  }
}

TEST(GradientCheck, KlIsZeroWhenStudentMatchesTeacher) {
  std::mt19937 rng(10);
  const int n = 2, V = 6;
  FakeTeacher t = make_teacher(rng, n, V, V);
  // Student logits = teacher logits (in top-k order scattered back).
  Vec logits(n * V);
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < V; ++j) logits[r * V + t.ids[r * V + j]] = t.logits[r * V + j];
  Vec d(n * V);
  EXPECT_NEAR(distill_loss(DistillLoss::kFullKl, logits.data(), t.view(V), n, V, d.data()), 0.0, 1e-6);
  for (double g : d) EXPECT_NEAR(g, 0.0, 1e-6);
}

TEST(GradientCheck, WholeTinyModel) {
  DraftConfig c;
  c.n_vocab = 11;
  c.n_embd = 8;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.n_ff = 6;
  ASSERT_TRUE(c.validate().ok());
  std::vector<float> init = init_params(c, 42);
  Vec params(init.begin(), init.end());
  std::mt19937 rng(11);
  for (auto& p : params) p += std::normal_distribution<double>(0.0, 0.3)(rng);  // away from init symmetry
  const int n_seq = 2, L = 4, k = 4;
  std::vector<int32_t> tokens = {1, 5, 9, 2, 0, 10, 10, 3};
  FakeTeacher t = make_teacher(rng, n_seq * L, c.n_vocab, k);
  ThreadPool pool(2);
  DraftModelRunner<double> runner(c, &pool);
  auto loss = [&] {
    const Vec& lg = runner.forward(params.data(), tokens.data(), n_seq, L);
    Vec d(lg.size());
    return distill_loss(DistillLoss::kReducedKl, lg.data(), t.view(k), n_seq * L, c.n_vocab, d.data());
  };
  const Vec& lg = runner.forward(params.data(), tokens.data(), n_seq, L);
  Vec d(lg.size());
  distill_loss(DistillLoss::kReducedKl, lg.data(), t.view(k), n_seq * L, c.n_vocab, d.data());
  Vec grad(params.size());
  runner.backward(params.data(), d.data(), grad.data());
  expect_grad("whole model", params, grad, loss);
}

}  // namespace
}  // namespace sf::train
