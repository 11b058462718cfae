#include "spec/auto_tree_builder.h"

#include <algorithm>

#include "base/check.h"
#include "spec/edgellm_tree_builder.h"
#include "spec/frontier_tree_builder.h"
#include "spec/hybrid_drafter.h"
#include "spec/static_tree_builder.h"

namespace sf {
namespace {

// Drafts nothing: the cycle verifies the pending token alone, which is plain decoding.
class PlainArm : public TreeBuilder {
 public:
  const char* name() const override { return "plain"; }
  Status build(Drafter&, const BuildContext&, TokenTree* tree) override {
    tree->clear();
    return Status::Ok();
  }
};

FrontierBuilderOptions frontier_options(const SpecConfig& config, FrontierBuilderOptions::Objective objective,
                                        int node_budget) {
  FrontierBuilderOptions o;
  o.objective = objective;
  o.node_budget = node_budget;
  o.max_nodes = config.max_tree_nodes;
  o.max_depth = config.max_tree_depth;
  return o;
}

}  // namespace

std::vector<AutoArm> make_auto_arms(const SpecConfig& config, bool prune) {
  using Objective = FrontierBuilderOptions::Objective;
  std::vector<AutoArm> arms;
  // Plain decoding first: it is the cheapest to try in every regime, and the rate the
  // others are measured against from the start.
  arms.push_back({"plain", std::make_unique<PlainArm>(), false, ArmSource::kNone});
  // CoordGen's retrieval trees of at most n nodes (at most n + 1 tokens per cycle).
  const auto retrieval = [&](int n, const char* name) {
    arms.push_back({name,
                    std::make_unique<FrontierTreeBuilder>(frontier_options(config, Objective::kNodeBudget, n), name),
                    false, ArmSource::kRetrieval, n + 1.0});
  };
  if (config.draft_model_path.empty()) {
    retrieval(16, "coordgen:16");
    retrieval(4, "coordgen:4");
    return arms;
  }
  // Retrieval second: its trial costs about a plain pass (no draft step; where nothing in
  // the context matches its tree is empty), so it is tried before the model arms use up the
  // exploration budget. Placed last, it was never tried on the synthetic 3B at 0% (5
  // repetitions of 32 tokens, CoordGen the best method there at 1.3x Flash-AR): the model
  // arms' trials had spent the budget by then.
  retrieval(16, "coordgen:16");
  // LEVER next: its own cost model is usually close, so trying it early finds a good arm
  // fast where speculation pays; the chains cover the regimes where it misjudges.
  arms.push_back({"lever",
                  std::make_unique<FrontierTreeBuilder>(frontier_options(config, Objective::kGainPerCost, 0), "lever"),
                  prune, ArmSource::kModel, config.max_tree_depth + 1.0});
  // EdgeLLM's confidence-paced trees: the best policy where a pass costs tens of draft
  // steps (docs/edgellm.md). Without provisional drafting: auto has no draft worker, and
  // lending measured no gain on the pairs here.
  EdgeLlmConfig edgellm = config.edgellm;
  edgellm.provisional = false;
  arms.push_back(
      {"edgellm",
       std::make_unique<EdgeLlmTreeBuilder>(edgellm, config.max_tree_nodes, config.max_tree_depth, "edgellm"), false,
       ArmSource::kModel, config.max_tree_depth + 1.0});
  // A chain of k draft tokens emits at most k + 1 tokens per cycle. (StaticTreeBuilder keeps
  // the name's pointer: string literals.)
  const auto chain = [&arms](int k, const char* name) {
    arms.push_back(
        {name, std::make_unique<StaticTreeBuilder>(std::vector<int>(k, 1), name), false, ArmSource::kModel, k + 1.0});
  };
  chain(4, "chain:4");
  chain(2, "chain:2");
  chain(8, "chain:8");
  return arms;
}

AutoTreeBuilder::AutoTreeBuilder(std::vector<AutoArm> arms, ArmSelectorOptions options)
    : arms_(std::move(arms)), selector_(static_cast<int>(arms_.size()), options) {
  SF_CHECK(!arms_.empty());
  // How many tokens a cycle can emit tells the selector which arms cannot catch up with the
  // best at their measured cost (ArmSelector::set_max_tokens_per_cycle); plain decoding: 1.
  for (size_t a = 0; a < arms_.size(); ++a) {
    const double max_tokens = arms_[a].source != ArmSource::kNone ? arms_[a].max_tokens : 1.0;
    if (max_tokens < std::numeric_limits<double>::infinity())
      selector_.set_max_tokens_per_cycle(static_cast<int>(a), max_tokens);
  }
}

LatencyProfile* AutoTreeBuilder::latency_profile() {
  for (AutoArm& arm : arms_)
    if (LatencyProfile* p = arm.builder->latency_profile()) return p;
  return nullptr;
}

Status AutoTreeBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  if (!profiles_shared_) {
    // The session seeded the first profile after construction; every arm starts from it.
    profiles_shared_ = true;
    if (LatencyProfile* seeded = latency_profile())
      for (AutoArm& arm : arms_)
        if (LatencyProfile* p = arm.builder->latency_profile(); p && p != seeded) *p = *seeded;
  }
  current_ = selector_.choose(entry_seconds(drafter));
  const AutoArm& arm = arms_[static_cast<size_t>(current_)];
  // With a draft model and retrieval (a HybridDrafter), the arm drafts from its own source
  // only; both keep following the commits. A lone drafter is the arms' only source.
  // The session's own choice (the draft model) is back for whatever method runs next.
  auto* hybrid = dynamic_cast<HybridDrafter*>(&drafter);
  const bool model_before = hybrid && hybrid->drafts_from_model();
  const bool retrieval_before = hybrid && hybrid->drafts_from_retrieval();
  if (hybrid && arm.source != ArmSource::kNone)
    hybrid->set_sources(arm.source == ArmSource::kModel, arm.source == ArmSource::kRetrieval);
  const DraftCounters before = drafter.draft_counters();
  const Status status = arm.builder->build(drafter, ctx, tree);
  if (hybrid) hybrid->set_sources(model_before, retrieval_before);
  const DraftCounters& after = drafter.draft_counters();
  observe_catch_up(after.catch_up_tokens - before.catch_up_tokens, after.catch_up_seconds - before.catch_up_seconds);
  return status;
}

std::vector<double> AutoTreeBuilder::entry_seconds(const Drafter& drafter) const {
  std::vector<double> entry(arms_.size(), 0.0);
  const double pending = static_cast<double>(drafter.pending_tokens());
  for (size_t a = 0; a < arms_.size(); ++a)
    if (arms_[a].source == ArmSource::kModel)
      entry[a] = catch_up_per_token_ * std::max(0.0, pending - selector_.tokens_per_cycle(static_cast<int>(a)));
  return entry;
}

void AutoTreeBuilder::observe_catch_up(uint64_t tokens, double seconds) {
  // Only long catch-ups: a cycle's usual few tokens cost mostly the pass's fixed overhead,
  // while the cost that matters here is that of hundreds of tokens at a long context.
  constexpr uint64_t kLongCatchUp = 16;
  if (tokens < kLongCatchUp || seconds <= 0) return;
  const double per_token = seconds / static_cast<double>(tokens);
  catch_up_per_token_ = catch_up_per_token_ > 0 ? 0.5 * (catch_up_per_token_ + per_token) : per_token;
}

void AutoTreeBuilder::observe(const TokenTree& tree, const CycleStats& stats) {
  TreeBuilder& chosen = *arms_[static_cast<size_t>(current_)].builder;
  chosen.observe(tree, stats);
  for (AutoArm& arm : arms_) {
    if (arm.builder.get() == &chosen) continue;
    // A pruned pass ran part of its rows through part of the layers: not a full pass's cost.
    if (LatencyProfile* p = arm.builder->latency_profile(); p && stats.rows_pruned == 0)
      p->observe_verify(stats.tree_nodes + 1, stats.context, stats.verify_seconds);
    // How often the target picks a draft token of a given probability does not depend on
    // which arm put it in the tree: an arm that runs rarely would otherwise shape its trees
    // with a calibration learnt from a handful of its own cycles.
    if (AcceptanceCalibration* c = arm.builder->acceptance_calibration()) c->observe(tree, stats.visited);
  }
  // Every cycle emits its accepted nodes and a bonus token.
  // The drafting is the arm's own work (LEVER's periodic probe trees, the draft model
  // catching up after plain decoding): never capped as an outlier.
  selector_.observe(current_, stats.accepted + 1.0, stats.draft_seconds + stats.verify_seconds, stats.draft_seconds);
}

std::vector<int64_t> AutoTreeBuilder::arm_cycles() const {
  std::vector<int64_t> cycles;
  for (int a = 0; a < selector_.n_arms(); ++a) cycles.push_back(selector_.cycles(a));
  return cycles;
}

AutoProfile AutoTreeBuilder::profile() const {
  AutoProfile p;
  p.catch_up_seconds_per_token = catch_up_per_token_;
  for (int a = 0; a < selector_.n_arms(); ++a)
    if (!selector_.lasting_evidence(a).empty())
      p.arms.emplace_back(arms_[static_cast<size_t>(a)].name, selector_.lasting_evidence(a));
  return p;
}

void AutoTreeBuilder::start_from(const AutoProfile& profile) {
  catch_up_per_token_ = profile.catch_up_seconds_per_token;
  for (int a = 0; a < selector_.n_arms(); ++a)
    if (const ArmEvidence* e = profile.find(arms_[static_cast<size_t>(a)].name)) selector_.start_from(a, *e);
}

}  // namespace sf
