#include "spec/edgellm_tree_builder.h"

#include <algorithm>
#include <cmath>

namespace sf {

namespace {
// The measured size bound's arms: no cap first (the tree as the paper's rules and the cost
// stop make it), then caps below the builder's own limit.
std::vector<int> size_caps_below(int max_nodes) {
  std::vector<int> caps = {max_nodes};
  for (int cap : {16, 8})
    if (cap < max_nodes) caps.push_back(cap);
  return caps;
}
}  // namespace

EdgeLlmTreeBuilder::EdgeLlmTreeBuilder(const EdgeLlmConfig& config, int max_nodes, int max_depth, const char* name)
    : config_(config),
      max_nodes_(max_nodes),
      max_depth_(max_depth),
      name_(name),
      alpha_(std::clamp(config.alpha, config.alpha_min, config.alpha_max)),
      size_selector_(size_caps_below(max_nodes)) {}

const NodeDistribution* EdgeLlmTreeBuilder::dist_of(int32_t node) const {
  const size_t i = static_cast<size_t>(node + 1);
  return i < has_dist_.size() && has_dist_[i] ? &dists_[i] : nullptr;
}

Result<bool> EdgeLlmTreeBuilder::ensure_drafted(Drafter& drafter, const TokenTree& tree, int32_t node) {
  if (dist_of(node)) return true;
  // The other leaves that may be extended later ride along in the same draft pass (up to
  // kDraftBatch rows): one pass costs about as much as one row on a CPU, where the
  // weights' memory traffic dominates. The pacer's decisions do not change.
  std::vector<int32_t> nodes = {node};
  if (node != TokenTree::kRoot)
    for (int32_t n = 0; n < tree.size() && static_cast<int>(nodes.size()) < kDraftBatch; ++n)
      if (n != node && tree.children(n).empty() && tree.node(n).depth < max_depth_ && !dist_of(n) &&
          dist_of(tree.node(n).parent))
        nodes.push_back(n);
  std::vector<NodeDistribution> out;
  const double before = drafter.draft_counters().seconds;
  SF_RETURN_IF_ERROR(drafter.draft(tree, nodes, &out));
  const double seconds = drafter.draft_counters().seconds - before;
  draft_spent_ += seconds;
  if (out.empty()) return false;  // the drafter's context is full
  profile_.observe_draft(static_cast<int>(out.size()), seconds);
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t i = static_cast<size_t>(nodes[k] + 1);
    if (dists_.size() <= i) {
      dists_.resize(i + 1);
      has_dist_.resize(i + 1, false);
    }
    dists_[i] = std::move(out[k]);
    has_dist_[i] = true;
    if (!dists_[i].probs.empty()) top_p_ += 0.05 * (acceptance(nodes[k], dists_[i].probs[0].p) - top_p_);
  }
  return true;
}

int EdgeLlmTreeBuilder::next_candidate(const TokenTree& tree, int32_t node) const {
  const NodeDistribution* d = dist_of(node);
  if (!d) return -1;
  const int limit = std::min<int>(kCandidateSet, static_cast<int>(d->probs.size()));
  for (int r = 0; r < limit; ++r)
    if (tree.find_child(node, d->probs[r].id) < 0) return r;
  return -1;
}

void EdgeLlmTreeBuilder::add_child(TokenTree* tree, int32_t parent, const TokenProb& tp) {
  const int32_t child = tree->add(tp.id, parent, tp.p);
  conf_.resize(static_cast<size_t>(child) + 2);
  conf_[child + 1] = conf_[parent + 1] * tp.p;
  reach_.resize(conf_.size());
  reach_[child + 1] = reach_[parent + 1] * acceptance(parent, tp.p);
  gain_ += reach_[child + 1];
}

double EdgeLlmTreeBuilder::acceptance(int32_t parent, double p) const {
  const NodeDistribution* d = dist_of(parent);
  double mass = 0;
  if (d)
    for (size_t k = 0; k < d->probs.size() && k < static_cast<size_t>(kCandidateSet); ++k) mass += d->probs[k].p;
  return calibration_.calibrate(p, mass > 0 ? mass : 1.0);
}

EdgeLlmTreeBuilder::StepCost EdgeLlmTreeBuilder::step_cost(int rows, int context, double hidden_draft) const {
  StepCost c;
  // Without measurements of both sides there is nothing to weigh: the paper's rule alone.
  if (!config_.cost_stop || !profile_.has_verify_data() || profile_.draft_pass_seconds() <= 0) return c;
  c.active = true;
  // The smaller of the local slope and the average slope up to the largest tree: where a
  // pass waits on I/O its time swings by milliseconds, and a local fit over a few noisy
  // cells can make rows look dearer than the whole tree (the size bound above already
  // keeps compute-bound trees small). Even a row that measures free costs something.
  const double one = profile_.verify_seconds(1, context);
  const double average = (profile_.verify_seconds(max_nodes_ + 1, context) - one) / max_nodes_;
  c.row = std::max(
      {std::min(profile_.marginal_seconds(rows + 1, context), average), 0.1 * profile_.draft_pass_seconds(), 1e-9});
  // While the target's first streamed units are still loading, a draft pass only fills
  // time the cycle waits anyway: it costs what runs past that pending I/O, so where a pass
  // is I/O-bound the tree grows while that is free (the paper's premise, one cycle early).
  // A step's draft pass is charged what a one-row pass measures (draft_pass_seconds: every
  // cycle runs some); the other leaves riding in the same pass are later steps' gain. The
  // per-row part is measured only on multi-row passes, which small trees rarely run, so one
  // slow sample of it could stay for good and keep every tree at a node or two.
  const double pass = profile_.draft_pass_seconds();
  c.draft = std::max(pass - std::max(hidden_draft - draft_spent_, 0.0), 0.0);
  // The rate a step must beat: the session's realised tokens per second (the long-run rate
  // is what a step competes with: the time it takes is time the next cycles do not get),
  // or this tree's expected rate before any cycle was measured. The tree's own rate alone
  // would be inflated by nodes carried in for free from provisional drafting.
  c.rate = realised_rate_ > 0 ? realised_rate_
                              : gain_ / std::max(draft_spent_ + profile_.verify_seconds(rows, context), 1e-9);
  return c;
}

double EdgeLlmTreeBuilder::pace_conf(int32_t node) const {
  return config_.calibrated_pacer ? reach_[node + 1] : conf_[node + 1];
}

double EdgeLlmTreeBuilder::pace_conf(int32_t parent, int rank) const {
  const double p = dist_of(parent)->probs[rank].p;
  return config_.calibrated_pacer ? reach_[parent + 1] * acceptance(parent, p) : conf_[parent + 1] * p;
}

double EdgeLlmTreeBuilder::fallback_confidence(int32_t node) const {
  // The most likely shape ranks steps by the calibrated chance; its T_c is read on the same
  // chances. On the raw products, a tree grown in that order drives the most confident
  // leaf's product down fast, eq. (3) pushed alpha to its bound and at EMULATED 25 MB/s
  // its trees stopped at 10-18 nodes where the paced ones reached ~48 (docs/edgellm.md).
  return config_.shape == EdgeLlmConfig::Shape::kMostLikely ? reach_[node + 1] : conf_[node + 1];
}

int32_t EdgeLlmTreeBuilder::best_leaf(const TokenTree& tree) const {
  int32_t best = TokenTree::kRoot;
  for (int32_t n = 0; n < tree.size(); ++n)
    if (tree.children(n).empty() && (best == TokenTree::kRoot || conf_[n + 1] > conf_[best + 1])) best = n;
  return best;
}

int64_t EdgeLlmTreeBuilder::affordable_nodes(int context) const {
  if (!profile_.has_verify_data()) return max_nodes_;
  // The cost of a row from a least-squares fit over the measured row counts around a
  // typical tree (single measurements swing with machine noise, and a tree size that is
  // never tried is never re-measured).
  // The largest of a local fit around kTypicalRows and the average slopes up to 32 rows and
  // up to the largest tree: one alone was swung by a noisy measurement on a shared machine,
  // and the largest trees are where the online measurements of grown trees land (a start-up
  // profile taken on a quiet machine must not keep trees big once passes get dear).
  const double one = profile_.verify_seconds(1, context);
  const double average = (profile_.verify_seconds(32, context) - one) / 31;
  const double largest = (profile_.verify_seconds(max_nodes_ + 1, context) - one) / max_nodes_;
  const double row = std::max({profile_.marginal_seconds(kTypicalRows, context), average, largest});
  if (row <= 0) return max_nodes_;
  const double nodes = kVerifySlack * profile_.verify_seconds(1, context) / row;
  return std::clamp<int64_t>(static_cast<int64_t>(nodes), 1, max_nodes_);
}

Status EdgeLlmTreeBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  tree->clear();
  dists_.clear();
  has_dist_.clear();
  conf_.assign(1, 1.0);
  reach_.assign(1, 1.0);
  anchor_ = TokenTree::kRoot;
  last_tc_ = 1;
  gain_ = 1;
  draft_spent_ = 0;
  hidden_at_build_ = ctx.hidden_draft_seconds;
  built_from_carried_ = ctx.carried != nullptr;
  switch_consulted_ = false;
  size_arm_ = uses_size_caps() ? size_selector_.choose() : 0;
  const int64_t max_nodes =
      std::min<int64_t>({ctx.max_nodes, affordable_nodes(ctx.context),
                         config_.fallback ? max_nodes_ : config_.fixed_tokens, size_selector_.cap(size_arm_)});
  if (ctx.carried) {
    // Provisional tokens confirmed by the last verification start this tree.
    *tree = ctx.carried->tree;
    for (int32_t n = 0; n < tree->size(); ++n) {
      conf_.push_back(conf_[tree->node(n).parent + 1] * tree->node(n).draft_prob);
      reach_.push_back(reach_[tree->node(n).parent + 1] * calibration_.calibrate(tree->node(n).draft_prob, 1.0));
      gain_ += reach_.back();
    }
    for (size_t i = 0; i < ctx.carried->drafted.size(); ++i) {
      const size_t at = static_cast<size_t>(ctx.carried->drafted[i] + 1);
      if (dists_.size() <= at) {
        dists_.resize(at + 1);
        has_dist_.resize(at + 1, false);
      }
      dists_[at] = ctx.carried->dists[i];
      has_dist_[at] = true;
    }
    // A carried tree larger than this cycle allows (a nearly full context) is cut back.
    if (tree->size() > max_nodes) {
      std::vector<bool> keep(static_cast<size_t>(tree->size()), false);
      for (int32_t n = 0; n < max_nodes; ++n) keep[n] = true;
      std::vector<int32_t> old_of_new;
      *tree = tree->subtree(keep, &old_of_new);
      conf_.resize(static_cast<size_t>(tree->size()) + 1);
      // The drafter still holds the cut nodes' cells under their old ids, so no node may
      // be added this cycle, not even by the provisional worker.
      return Status::Ok();
    }
  }
  if (max_nodes <= 0) return Status::Ok();
  SF_ASSIGN_OR_RETURN(bool ok, ensure_drafted(drafter, *tree, TokenTree::kRoot));
  if (!ok) return Status::Ok();
  const bool chain = !config_.pacer || config_.token_threshold > 0;
  const bool most_likely = config_.shape == EdgeLlmConfig::Shape::kMostLikely;
  while (tree->size() < max_nodes) {
    const double m = static_cast<double>(tree->size()) + 1;
    // Candidate steps: extend a leaf by its best token, or open a branch at a drafted node.
    int32_t best_node = TokenTree::kRoot;
    bool best_is_leaf = false;
    // The step's score: the paced shape's shortfall M * C_i - TB_i, or the most likely
    // shape's chance of acceptance.
    double best_score = -1e300, tc = 0;
    if (tree->empty()) {
      best_is_leaf = true;  // the root is the only "leaf"
      best_score = 0;
      tc = 1;
    }
    // The cost stop: steps that would lower the cycle's expected rate are not candidates
    // (the root's first step always is).
    const StepCost cost =
        tree->empty() ? StepCost{} : step_cost(tree->size() + 1, ctx.context, ctx.hidden_draft_seconds);
    for (int32_t n = 0; n < tree->size(); ++n) {
      const TreeNode& node = tree->node(n);
      if (!tree->children(n).empty()) continue;
      tc = std::max(tc, fallback_confidence(n));
      if (node.depth >= max_depth_) continue;
      const NodeDistribution* d = dist_of(n);
      // The chance that the target accepts the node this step adds (its whole path).
      const double chance = reach_[n + 1] * (d && !d->probs.empty() ? acceptance(n, d->probs[0].p) : top_p_);
      if (!cost.pays(chance, !d)) continue;
      const double score = most_likely ? chance : m * pace_conf(n) - node.depth;
      if (score > best_score) {
        best_score = score;
        best_node = n;
        best_is_leaf = true;
      }
    }
    if (!chain) {
      for (int32_t n = TokenTree::kRoot; n < tree->size(); ++n) {
        const int r = next_candidate(*tree, n);
        if (r < 0) continue;
        const int depth = n == TokenTree::kRoot ? 0 : tree->node(n).depth;
        const double chance = reach_[n + 1] * acceptance(n, dist_of(n)->probs[r].p);
        if (!cost.pays(chance, false)) continue;
        const double score = most_likely ? chance : m * pace_conf(n, r) - depth;
        if (score > best_score) {
          best_score = score;
          best_node = n;
          best_is_leaf = false;
        }
      }
    }
    last_tc_ = tc;
    if (uses_alpha() && !tree->empty() && tc < alpha_) break;  // fallback: verify now
    if (best_score == -1e300) break;                           // nothing can grow (depth limit) or pays (cost stop)
    if (best_is_leaf) {
      SF_ASSIGN_OR_RETURN(ok, ensure_drafted(drafter, *tree, best_node));
      if (!ok) break;
      const NodeDistribution& d = *dist_of(best_node);
      if (d.probs.empty()) break;
      // BiLD: the draft is not confident enough about its next token; verify.
      if (config_.token_threshold > 0 && d.probs[0].p < config_.token_threshold) break;
      add_child(tree, best_node, d.probs[0]);
    } else {
      add_child(tree, best_node, dist_of(best_node)->probs[next_candidate(*tree, best_node)]);
    }
  }
  if (!tree->empty()) {
    last_tc_ = 0;
    for (int32_t n = 0; n < tree->size(); ++n)
      if (tree->children(n).empty()) last_tc_ = std::max(last_tc_, fallback_confidence(n));
  }
  // The drafted nodes' candidate sets, from which the calibration learns what the target
  // picked (observe()).
  for (int32_t n = TokenTree::kRoot; n < tree->size(); ++n)
    if (const NodeDistribution* d = dist_of(n)) record_candidates(tree, n, *d);
  anchor_ = best_leaf(*tree);
  return Status::Ok();
}

bool EdgeLlmTreeBuilder::drafting_exposed() const {
  return !config_.lend_only_exposed || exposed_draft_ema_ > kExposedDraftShare * cycle_seconds_ema_;
}

bool EdgeLlmTreeBuilder::provisional_anchor(int32_t* leaf, const NodeDistribution** dist) const {
  if (!config_.provisional || anchor_ == TokenTree::kRoot) return false;
  // The switch measures this cycle only when it was asked.
  switch_consulted_ = drafting_exposed();
  if (!switch_consulted_ || !lending_.on()) return false;
  *leaf = anchor_;
  *dist = dist_of(anchor_);
  return true;
}

void EdgeLlmTreeBuilder::observe(const TokenTree& tree, const CycleStats& stats) {
  if (profile_.has_verify_data()) profile_.observe_verify(stats.tree_nodes + 1, stats.context, stats.verify_seconds);
  calibration_.observe(tree, stats.visited);
  const double cycle_seconds = stats.draft_seconds + stats.verify_seconds;
  if (cycle_seconds > 0) {
    const double rate = (stats.accepted + 1) / cycle_seconds;
    realised_rate_ = realised_rate_ > 0 ? realised_rate_ + kRateEma * (rate - realised_rate_) : rate;
  }
  if (config_.provisional && switch_consulted_) lending_.observe(stats.accepted + 1, cycle_seconds);
  // What lending could save: the drafting that ran past the read-ahead, in cycles that
  // drafted their whole tree (a carried chain had already done part of it).
  if (first_of_prompt_) {
    first_of_prompt_ = false;
  } else if (!built_from_carried_ && cycle_seconds > 0) {
    const double exposed = std::max(stats.draft_seconds - hidden_at_build_, 0.0);
    const bool first = cycle_seconds_ema_ <= 0;
    exposed_draft_ema_ = first ? exposed : exposed_draft_ema_ + kRateEma * (exposed - exposed_draft_ema_);
    cycle_seconds_ema_ = first ? cycle_seconds : cycle_seconds_ema_ + kRateEma * (cycle_seconds - cycle_seconds_ema_);
  }
  if (uses_size_caps() && cycle_seconds > 0) {
    std::vector<int32_t> path;
    for (int32_t i = 1; i <= stats.accepted && i < static_cast<int32_t>(stats.visited.size()); ++i)
      path.push_back(stats.visited[static_cast<size_t>(i)].node);
    size_selector_.observe(size_arm_, tree.size(), path, cycle_seconds);
  }
  if (!uses_alpha() || tree.empty() || stats.visited.empty()) return;
  // The last accepted node, and the most confident branch through it.
  const int32_t last = stats.visited[static_cast<size_t>(stats.accepted)].node;
  int32_t leaf = last;
  if (last == TokenTree::kRoot || !tree.children(last).empty()) {
    leaf = TokenTree::kRoot;
    for (int32_t n = std::max(last, 0); n < tree.size(); ++n) {
      if (!tree.children(n).empty()) continue;
      bool below = last == TokenTree::kRoot;
      for (int32_t a = n; !below && a != TokenTree::kRoot; a = tree.node(a).parent) below = a == last;
      if (below && (leaf == TokenTree::kRoot || conf_[n + 1] > conf_[leaf + 1])) leaf = n;
    }
  }
  if (leaf == TokenTree::kRoot) return;
  const double n_all = tree.node(leaf).depth;
  const double n_correct = stats.accepted;
  if (n_correct >= n_all) {
    alpha_ *= 0.5;
  } else {
    const double tc = std::max(last_tc_, 1e-12);
    alpha_ /= std::pow(tc, (n_all - n_correct) / n_all);
  }
  alpha_ = std::clamp(alpha_, static_cast<double>(config_.alpha_min), static_cast<double>(config_.alpha_max));
}

}  // namespace sf
