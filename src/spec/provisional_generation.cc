#include "spec/provisional_generation.h"

#include "base/timer.h"
#include "spec/gated_layer_source.h"

namespace sf {

void run_provisional(Drafter& drafter, ComputeGate& gate, const std::atomic<bool>& stop, ProvisionalJob* job) {
  Stopwatch timer;
  const double blocked_before = gate.blocked_seconds();
  int32_t node = job->anchor;
  NodeDistribution dist;
  bool have_dist = false;
  double confidence = 1;  // below the chain's first token
  if (job->anchor_dist) {
    dist = *job->anchor_dist;
    have_dist = true;
  }
  while (static_cast<int>(job->chain.size()) < job->max_tokens && !stop.load(std::memory_order_acquire)) {
    if (!have_dist) {
      if (!gate.wait_open() || stop.load(std::memory_order_acquire)) break;
      std::vector<NodeDistribution> out;
      Status st = drafter.draft(job->tree, {node}, &out);
      if (!st.ok() && st.message() == GatedLayerSource::kCancelledMessage) break;  // the pass ended mid-step
      job->status = st;
      if (!job->status.ok() || out.empty()) break;  // an error, or the draft's context is full
      dist = std::move(out[0]);
      job->drafted.push_back(node);
      job->dists.push_back(dist);
    }
    if (dist.probs.empty()) break;
    if (!job->chain.empty()) {
      confidence *= dist.probs[0].p;
      if (confidence < job->min_confidence) break;
    }
    node = job->tree.add(dist.probs[0].id, node, dist.probs[0].p);
    job->chain.push_back(node);
    have_dist = false;
  }
  job->draft_seconds = timer.elapsed() - (gate.blocked_seconds() - blocked_before);
}

int carry_provisional(Drafter& drafter, const ProvisionalJob& job, const std::vector<int32_t>& accepted, int32_t bonus,
                      CarriedDrafts* carried, bool* committed) {
  *committed = false;
  carried->tree.clear();
  carried->drafted.clear();
  carried->dists.clear();
  // (Mirror-SD's anchor may be the root itself: nothing accepted, the bonus a candidate.)
  const int32_t last = accepted.empty() ? TokenTree::kRoot : accepted.back();
  if (job.chain.empty() || last != job.anchor) return 0;
  const int32_t first = job.chain.front();
  if (job.tree.node(first).token != bonus) return 0;
  std::vector<int32_t> old_of_new;
  TokenTree next = job.tree.subtree_below(first, &old_of_new);
  // The first token matched the bonus, but without its draft pass nothing below it exists.
  if (!drafter.commit_carry(job.tree, accepted, first, next, old_of_new)) return 1;
  const int confirmed = static_cast<int>(job.chain.size());  // the first token and the chain below it
  *committed = true;
  for (size_t i = 0; i < job.drafted.size(); ++i) {
    const int32_t old = job.drafted[i];
    int32_t now = -2;
    if (old == first) now = TokenTree::kRoot;
    for (size_t j = 0; j < old_of_new.size() && now == -2; ++j)
      if (old_of_new[j] == old) now = static_cast<int32_t>(j);
    if (now == -2) continue;  // the anchor: now committed
    carried->drafted.push_back(now);
    carried->dists.push_back(job.dists[i]);
  }
  carried->tree = std::move(next);
  return confirmed;
}

}  // namespace sf
