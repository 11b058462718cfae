// The verifier's rejection sampling emits tokens distributed exactly as the target's p,
// whatever the draft's q and however the children were drafted. Tested on synthetic
// distributions over a 6-token vocabulary with a chi-square test (fixed seeds).
#include "spec/verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chi_square.h"

namespace sf {
namespace {

constexpr int kVocab = 6;

// Logits whose softmax at temperature 1 is p.
std::vector<float> logits_of(const std::vector<double>& p) {
  std::vector<float> l(p.size());
  for (size_t i = 0; i < p.size(); ++i) l[i] = p[i] > 0 ? static_cast<float>(std::log(p[i])) : -1e30f;
  return l;
}

SamplingParams plain_sampling(uint64_t seed) {
  SamplingParams s;
  s.temperature = 1.0f;
  s.top_k = 0;
  s.top_p = 1.0f;
  s.min_p = 0.0f;
  s.seed = seed;
  return s;
}

// Builds a one-level tree below the root with `samples` i.i.d. draws from q (recorded), or
// with deterministic children when q is empty.
TokenTree make_tree(const std::vector<double>& q, const std::vector<int32_t>& deterministic, Sampler& draft) {
  TokenTree tree;
  if (q.empty()) {
    for (int32_t t : deterministic) tree.add(t, TokenTree::kRoot, 1.0f);
    return tree;
  }
  std::vector<TokenProb> dist;
  for (int i = 0; i < kVocab; ++i)
    if (q[i] > 0) dist.push_back({i, static_cast<float>(q[i])});
  for (int k = 0; k < 3; ++k) {
    const int32_t token = draft.draw(dist);
    int32_t child = tree.find_child(TokenTree::kRoot, token);
    if (child < 0) child = tree.add(token, TokenTree::kRoot, 0.0f);
    tree.proposals(TokenTree::kRoot).push_back(child);
  }
  tree.draft_dist(TokenTree::kRoot) = dist;
  return tree;
}

// Empirical distribution of the first emitted token over many verifications.
std::vector<double> first_token_counts(const std::vector<double>& p, const std::vector<double>& q,
                                       const std::vector<int32_t>& deterministic, int trials, int* accepted) {
  const auto target_logits = logits_of(p);
  // Each accepted child's row: any distribution (only the first emitted token is counted).
  const auto child_logits = logits_of({0.1, 0.1, 0.2, 0.2, 0.2, 0.2});
  Sampler verifier(plain_sampling(1234));
  Sampler draft(plain_sampling(99));
  std::vector<double> counts(kVocab, 0.0);
  *accepted = 0;
  for (int i = 0; i < trials; ++i) {
    const TokenTree tree = make_tree(q, deterministic, draft);
    const VerifyResult r = verify_tree(
        tree, kVocab, [&](int64_t row) { return row == 0 ? target_logits.data() : child_logits.data(); }, verifier, {});
    const int32_t first = r.accepted.empty() ? r.bonus : tree.node(r.accepted[0]).token;
    counts[first] += 1;
    *accepted += r.accepted.empty() ? 0 : 1;
  }
  return counts;
}

const std::vector<double> kTarget = {0.40, 0.25, 0.15, 0.10, 0.07, 0.03};

TEST(Verifier, IidDraftSamplesPreserveTargetDistribution) {
  const std::vector<double> q = {0.05, 0.10, 0.50, 0.05, 0.05, 0.25};  // quite unlike p
  int accepted = 0;
  const int trials = 20000;
  const auto counts = first_token_counts(kTarget, q, {}, trials, &accepted);
  const double pval = test::chi_square_p_value(counts, kTarget);
  EXPECT_GT(pval, 1e-3) << "chi-square p-value";
  EXPECT_GT(accepted, trials / 10) << "drafts must be accepted for the test to exercise acceptance";
  EXPECT_LT(accepted, trials * 9 / 10) << "drafts must also be rejected to exercise the residual";
}

TEST(Verifier, DeterministicChildrenPreserveTargetDistribution) {
  int accepted = 0;
  const int trials = 20000;
  const auto counts = first_token_counts(kTarget, {}, {2, 0}, trials, &accepted);
  EXPECT_GT(test::chi_square_p_value(counts, kTarget), 1e-3);
  EXPECT_GT(accepted, trials / 2);
}

TEST(Verifier, ChiSquareDetectsAWrongDistribution) {
  // The statistic itself must be able to fail: counts drawn from q, tested against p.
  const std::vector<double> q = {0.05, 0.10, 0.50, 0.05, 0.05, 0.25};
  std::vector<double> counts(kVocab);
  for (int i = 0; i < kVocab; ++i) counts[i] = q[i] * 20000;
  EXPECT_LT(test::chi_square_p_value(counts, kTarget), 1e-6);
}

TEST(Verifier, GreedyAcceptsMatchingPathAndReturnsArgmaxBonus) {
  TokenTree tree;
  const int32_t a = tree.add(3, TokenTree::kRoot, 0.5f);
  tree.add(1, TokenTree::kRoot, 0.2f);
  const int32_t b = tree.add(4, a, 0.5f);
  std::vector<std::vector<float>> rows = {
      {0, 0, 0, 9, 0, 0}, {0, 0, 0, 0, 9, 0}, {9, 0, 0, 0, 0, 0}, {0, 0, 7, 0, 0, 0}};
  Sampler greedy(SamplingParams{0.0f});
  int64_t visited = 0;
  const VerifyResult r = verify_tree(tree, kVocab,
                                     [&](int64_t row) {
                                       ++visited;
                                       return rows[row].data();
                                     },
                                     greedy, {});
  ASSERT_EQ(r.accepted, (std::vector<int32_t>{a, b}));
  EXPECT_EQ(r.bonus, 2);  // argmax of node b's row (row 3)
  EXPECT_EQ(r.rows_visited, 3);
  EXPECT_EQ(visited, 3);  // node 1's row was never computed
}

}  // namespace
}  // namespace sf

namespace sf::test {
namespace {
TEST(ChiSquare, KnownCriticalValues) {
  EXPECT_NEAR(gamma_q(0.5, 3.841 / 2), 0.05, 1e-3);   // 1 dof, 95th percentile
  EXPECT_NEAR(gamma_q(2.5, 11.070 / 2), 0.05, 1e-3);  // 5 dof
  EXPECT_NEAR(gamma_q(5.0, 23.209 / 2), 0.01, 1e-3);  // 10 dof, 99th percentile
}
}  // namespace
}  // namespace sf::test
