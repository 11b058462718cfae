#include "spec/frontier_tree_builder.h"

#include <algorithm>

namespace sf {

double FrontierTreeBuilder::child_value(double p, double mass) const {
  if (options_.objective == FrontierBuilderOptions::Objective::kNodeBudget) return p;
  return calibration_.calibrate(p, mass);
}

Status FrontierTreeBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  tree->clear();
  reach_.clear();
  expected_rate_ = 0;
  const bool gain_per_cost = options_.objective == FrontierBuilderOptions::Objective::kGainPerCost;
  const int64_t cap = std::min<int64_t>(
      ctx.max_nodes, gain_per_cost ? options_.max_nodes : std::min(options_.node_budget, options_.max_nodes));
  if (cap <= 0) return Status::Ok();
  if (gain_per_cost && !root_may_pay(ctx.context)) return Status::Ok();  // plain decoding this cycle

  std::vector<Candidate> frontier;
  std::vector<NodeDistribution> dists;
  double c_draft = 0;  // this cycle's measured draft time so far
  // Drafts `nodes` in one pass and moves their candidates into the frontier.
  auto expand = [&](const std::vector<int32_t>& nodes) -> Status {
    const DraftCounters before = drafter.draft_counters();
    SF_RETURN_IF_ERROR(drafter.draft(*tree, nodes, &dists));
    const double seconds = drafter.draft_counters().seconds - before.seconds;
    c_draft += seconds;  // this cycle's real cost, a long catch-up included
    if (!dists.empty() && !caught_up_beyond_a_cycle(before, drafter.draft_counters()))
      profile_.observe_draft(static_cast<int>(dists.size()), seconds);
    for (size_t i = 0; i < dists.size(); ++i) {
      const int32_t parent = nodes[i];
      record_candidates(tree, parent, dists[i]);
      const std::vector<TokenProb>& c = tree->candidates(parent);
      const double mass = candidate_mass(c);
      const double b_parent = parent == TokenTree::kRoot ? 1.0 : reach_[parent];
      const int n = std::min<int>(options_.candidates, static_cast<int>(c.size()));
      for (int k = 0; k < n; ++k) frontier.push_back({parent, c[k].id, c[k].p, b_parent * child_value(c[k].p, mass)});
      if (n > 0) rho_ += 0.05 * (std::clamp(child_value(c[0].p, mass), 0.3, 1.0) - rho_);
    }
    return Status::Ok();
  };
  SF_RETURN_IF_ERROR(expand({TokenTree::kRoot}));

  double gain = 1;  // G: the bonus token plus the expected accepted nodes
  // A node is worth its reach b, and where the drafter reuses rejected drafts, what the
  // target's prediction on its row brings back later if it is rejected (1 - b). Not part of
  // G: this cycle does not emit it. On the synthetic 3B at 0%, where a row costs ~1% of a
  // pass, auto's retrieval trees sized for b alone (2-10 nodes) kept few rejected tails to
  // reuse: 26 passes for 30 tokens against CoordGen's 23 (16-node trees); 22 with it.
  const double reuse = drafter.reuse_tokens_per_rejected_row();
  const auto worth = [reuse](double b) { return b + (1 - b) * reuse; };
  const double draft_row = std::max(profile_.draft_row_seconds(), 1e-7);
  // Even a free-looking row costs something (attention, the walk): never divide by zero.
  const double row_floor = std::max(1e-7, 0.1 * draft_row);
  std::vector<int32_t> pending;  // inserted this round, to be expanded
  double pending_max_b = 0;
  while (true) {
    while (!frontier.empty() && tree->size() < cap) {
      auto best = std::max_element(frontier.begin(), frontier.end(), [](const Candidate& a, const Candidate& b) {
        return a.b < b.b || (a.b == b.b && a.token > b.token);
      });
      const Candidate v = *best;
      // A child of a node inserted this round might be worth more than v: draft first.
      if (!pending.empty() && v.b < rho_ * pending_max_b) break;
      const int32_t depth = (v.parent == TokenTree::kRoot ? 0 : tree->node(v.parent).depth) + 1;
      bool expandable = depth < options_.max_depth && tree->size() + 1 < cap;
      if (gain_per_cost) {
        const int rows = tree->size() + 1;  // the root and the nodes so far
        const double verify = profile_.verify_seconds(rows, ctx.context);
        const double d_verify = std::max(profile_.marginal_seconds(rows + 1, ctx.context), row_floor);
        const double average = gain / (c_draft + verify);
        // Every candidate left has a lower b and the same verification increment.
        if (worth(v.b) / d_verify <= average) {
          const bool unmeasured = profile_.verify_samples(rows + 1, ctx.context) < 2;
          if (!unmeasured || ++stalls_ % kProbeEvery != 0) break;  // ends this round
          expandable = false;                                      // a probe: one more row, as a leaf
        } else {
          // Expanding pays only if v's best child could pass the same test later.
          expandable = expandable && worth(rho_ * v.b) / (d_verify + draft_row) > average;
        }
      }
      *best = frontier.back();
      frontier.pop_back();
      const int32_t node = tree->add(v.token, v.parent, v.draft_prob);
      reach_.push_back(v.b);
      gain += v.b;
      if (expandable) {
        pending.push_back(node);
        pending_max_b = std::max(pending_max_b, v.b);
      }
    }
    if (pending.empty()) break;
    SF_RETURN_IF_ERROR(expand(pending));
    pending.clear();
    pending_max_b = 0;
  }
  if (gain_per_cost && tree->size() > 0) {
    const double seconds = c_draft + profile_.verify_seconds(tree->size() + 1, ctx.context);
    if (seconds > 0) expected_rate_ = gain / seconds;
  }
  return Status::Ok();
}

bool FrontierTreeBuilder::root_may_pay(int context) {
  // Even the root's best child (worth at most rho tokens) must pay for the root's draft
  // pass and one more verification row, or the cycle is better spent decoding plainly.
  // Where a pass is cheap next to drafting (a small resident target) this keeps LEVER at
  // Flash-AR's speed instead of below it. Every kProbeEvery-th skipped cycle drafts anyway,
  // so the draft's cost and the calibration keep being measured.
  const double verify = profile_.verify_seconds(1, context);
  const double draft = profile_.draft_pass_seconds();
  if (verify <= 0 || draft <= 0) return true;
  const double d_verify = std::max(profile_.marginal_seconds(2, context), 1e-7);
  const double plain_rate = 1.0 / verify;
  const double best_rate = (1.0 + rho_ * calibration_.reliability()) / (verify + d_verify + draft);
  if (best_rate > plain_rate) return true;
  return ++skips_ % kProbeEvery == 0;
}

void FrontierTreeBuilder::observe(const TokenTree& tree, const CycleStats& stats) {
  calibration_.observe(tree, stats.visited);
  if (options_.objective == FrontierBuilderOptions::Objective::kGainPerCost)
    profile_.observe_verify(stats.tree_nodes + 1, stats.context, stats.verify_seconds);
}

}  // namespace sf
