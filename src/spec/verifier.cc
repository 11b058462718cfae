#include "spec/verifier.h"

#include <algorithm>

namespace sf {
namespace {

// Draws from a dense distribution with one uniform (sum need not be exactly 1).
int32_t draw_dense(const std::vector<double>& p, Sampler& sampler) {
  double total = 0;
  for (double v : p) total += v;
  const double u = sampler.uniform() * total;
  double cum = 0;
  int32_t last = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    cum += p[i];
    last = static_cast<int32_t>(i);
    if (u < cum) return last;
  }
  return last;
}

void normalize(std::vector<double>& p) {
  double total = 0;
  for (double v : p) total += v;
  if (total <= 0) return;
  for (double& v : p) v /= total;
}

}  // namespace

VerifyResult verify_tree(const TokenTree& tree, int n_vocab, const RowLogitsFn& row_logits, Sampler& sampler,
                         const std::vector<int32_t>& history) {
  VerifyResult r;
  int32_t cur = TokenTree::kRoot;
  if (sampler.params().greedy()) {
    // Greedy needs no distributions and no history: nothing to allocate or copy per cycle
    // (a dense vocabulary-sized buffer is 1 MiB for Llama 3; with a small resident target
    // that once cost more than a cycle's verification row).
    while (true) {
      const float* logits = row_logits(cur + 1);
      ++r.rows_visited;
      const int32_t best = argmax(logits, n_vocab);
      const int32_t child = tree.find_child(cur, best);
      if (child < 0) {
        r.bonus = best;
        return r;
      }
      r.accepted.push_back(child);
      cur = child;
    }
  }
  std::vector<int32_t> path_history = history;
  std::vector<double> p(static_cast<size_t>(n_vocab)), q(static_cast<size_t>(n_vocab));

  while (true) {
    const float* logits = row_logits(cur + 1);
    ++r.rows_visited;

    std::fill(p.begin(), p.end(), 0.0);
    for (const TokenProb& tp : sampler.distribution(logits, n_vocab, path_history)) p[tp.id] = tp.p;
    const std::vector<int32_t>& sampled = tree.proposals(cur);
    const bool iid = !sampled.empty();
    const std::vector<int32_t>& tries = iid ? sampled : tree.children(cur);
    if (iid) {
      std::fill(q.begin(), q.end(), 0.0);
      for (const TokenProb& tp : tree.draft_dist(cur)) q[tp.id] = tp.p;
    }
    int32_t accepted = -1;
    for (int32_t child : tries) {
      const int32_t x = tree.node(child).token;
      const double qx = iid ? q[x] : 1.0;
      const double ratio = qx > 0 ? std::min(1.0, p[x] / qx) : 0.0;
      if (sampler.uniform() < ratio) {
        accepted = child;
        break;
      }
      // Residual: remove the draft's mass (one-hot for a deterministic child).
      if (iid) {
        for (int32_t i = 0; i < n_vocab; ++i) p[i] = std::max(0.0, p[i] - q[i]);
      } else {
        p[x] = 0;
      }
      normalize(p);
    }
    if (accepted < 0) {
      r.bonus = draw_dense(p, sampler);
      return r;
    }
    r.accepted.push_back(accepted);
    path_history.push_back(tree.node(accepted).token);
    cur = accepted;
  }
}

}  // namespace sf
