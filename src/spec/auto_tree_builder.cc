#include "spec/auto_tree_builder.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/check.h"
#include "base/timer.h"
#include "spec/edgellm_tree_builder.h"
#include "spec/frontier_tree_builder.h"
#include "spec/hybrid_drafter.h"
#include "spec/mirror_chain_builder.h"
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

// The verification seconds of a cycle like this one had it drafted for only `draft` seconds
// (of the cycle's stats.draft_seconds), given `verify` for its pass without the I/O stall that
// this adds: drafting while the pass's first streamed weights were still being read did not
// make the cycle longer, the pass would have waited for them anyway, so cutting it saves only
// what ran past that read-ahead; the rest becomes the pass's I/O stall. (Counted as saved,
// it made chain:4 look as fast as chain:8 at a 50% budget, where most of a chain's drafting
// hides under the reads: in the reports' 50% rows auto ran chain:4 in 62 (c384744's run)
// and 153 (57b7a0a's) of ~280 cycles, at ~0.85x chain:8.)
double verify_with_less_drafting(const CycleStats& stats, double draft, double verify) {
  const double hidden = stats.hidden_io_seconds;
  const double draft_saved = std::max(stats.draft_seconds, hidden) - std::max(draft, hidden);
  const double stall_added = (stats.draft_seconds - draft) - draft_saved;
  return verify + stall_added;
}

// The name an arm's pruning setting has in the profile.
std::string prune_setting_name(const std::string& arm, bool on) { return arm + (on ? "/prune" : "/no-prune"); }

}  // namespace

std::vector<AutoArm> make_auto_arms(const SpecConfig& config, bool prune, bool parallel_rollouts) {
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
  // Retrieval second, as LEVER's gain/cost trees over the context's matches: where nothing
  // in the context matches, its tree is empty (a plain pass); where rows are dear (a
  // resident target) only strong matches pay for theirs. Its calibration reads the raw
  // retrieval probabilities, whose total says how long the match is. It was a tree of 16
  // nodes: on stories260K at a 100% budget those 17-row passes cost ~5x a plain token, for
  // one token when the match was wrong, and the arm lost there on every re-measure; on the
  // synthetic 3B at 0% its trial cycles fell on text with no match and auto never saw what
  // CoordGen gains on the prompt that repeats itself.
  // Tried second, right after plain decoding: its trial costs about a plain pass (no draft
  // step), so it is tried before the model arms use up the exploration budget. Placed last,
  // it was never tried on the synthetic 3B at 0% (5 repetitions of 32 tokens).
  {
    FrontierBuilderOptions o = frontier_options(config, Objective::kGainPerCost, 0);
    o.renormalise_candidates = false;
    arms.push_back({"coordgen", std::make_unique<FrontierTreeBuilder>(o, "coordgen"), false, ArmSource::kRetrieval,
                    config.max_tree_depth + 1.0});
  }
  // LEVER next: its own cost model is usually close, so trying it early finds a good arm
  // fast where speculation pays; the chains cover the regimes where it misjudges.
  arms.push_back({"lever",
                  std::make_unique<FrontierTreeBuilder>(frontier_options(config, Objective::kGainPerCost, 0), "lever"),
                  prune, ArmSource::kModel, config.max_tree_depth + 1.0});
  // EdgeLLM's trees: the best policy where a pass costs tens of draft
  // steps (docs/edgellm.md). With provisional drafting as configured (on unless
  // --edgellm-no-provisional): where the target streams, the arm lends the target's I/O
  // waits to the draft model only where its drafting runs past the read-ahead and only
  // while lending measurably pays (its MeasuredSwitch), so whether auto drafts during
  // verification is decided from this session's timings like everything else.
  // Its trees grow in the most likely order (EdgeLLM's default shape) even where the user asks
  // `--edgellm-shape paced` for `--spec edgellm`: with the rest
  // of the policy the same, auto with that arm was 1.02x auto with the paced one (median of
  // six 9-repetition runs on stories260K at 0% and 50%, five of them above 1; the policy alone
  // beat its paced form at 0% in all ten runs of docs/edgellm.md, "The tree's shape").
  EdgeLlmConfig edgellm = config.edgellm;
  edgellm.shape = EdgeLlmConfig::Shape::kMostLikely;
  arms.push_back(
      {"edgellm",
       std::make_unique<EdgeLlmTreeBuilder>(edgellm, config.max_tree_nodes, config.max_tree_depth, "edgellm"), false,
       ArmSource::kModel, config.max_tree_depth + 1.0});
  // A chain of k draft tokens emits at most k + 1 tokens per cycle. (StaticTreeBuilder keeps
  // the name's pointer: string literals.)
  const auto chain = [&arms](int k, const char* name) {
    arms.push_back({name, std::make_unique<StaticTreeBuilder>(std::vector<int>(k, 1), name), false, ArmSource::kModel,
                    k + 1.0, k});
  };
  chain(4, "chain:4");
  chain(2, "chain:2");
  chain(8, "chain:8");
  // Mirror-SD's window: a chain of draft_len tokens whose verification pass launches
  // rollouts of the next window at the exit layer, drafted on the draft's own threads while
  // the target runs the later layers on the rest (the session narrows the target's pool for
  // those cycles only, mirror_rollout.h). Whether giving the draft cores during the pass
  // pays is this arm's measured rate against the chains': a cycle whose rollout the
  // verification reuses starts from it (a carried tree, built by this arm). Only where the
  // session gives the target enough cores beside the draft's (auto_has_mirror_arm).
  if (parallel_rollouts)
    arms.push_back({"mirror", std::make_unique<MirrorChainBuilder>(config.draft_len, "mirror"), false,
                    ArmSource::kModel, config.draft_len + 1.0});
  return arms;
}

AutoTreeBuilder::AutoTreeBuilder(std::vector<AutoArm> arms, ArmSelectorOptions options)
    : arms_(std::move(arms)),
      selector_(static_cast<int>(arms_.size()), options),
      prune_switches_(arms_.size(), MeasuredSwitch(/*first_on=*/true)),
      before_cold_(arms_.size()) {
  SF_CHECK(!arms_.empty());
  // How many tokens a cycle can emit tells the selector which arms cannot catch up with the
  // best at their measured cost (ArmSelector::set_max_tokens_per_cycle); plain decoding: 1.
  for (size_t a = 0; a < arms_.size(); ++a) {
    const double max_tokens = arms_[a].source != ArmSource::kNone ? arms_[a].max_tokens : 1.0;
    if (max_tokens < std::numeric_limits<double>::infinity())
      selector_.set_max_tokens_per_cycle(static_cast<int>(a), max_tokens);
  }
  // The look at the context (look_at_retrieval) needs a retrieval arm with gain/cost trees.
  for (size_t a = 0; a < arms_.size(); ++a)
    if (arms_[a].source == ArmSource::kRetrieval)
      if (auto* b = dynamic_cast<FrontierTreeBuilder*>(arms_[a].builder.get()); b && b->latency_profile()) {
        retrieval_arm_ = static_cast<int>(a);
        retrieval_builder_ = b;
      }
}

LatencyProfile* AutoTreeBuilder::latency_profile() {
  // A draft model's arm first: a profile the session loads from a file (`--latency-profile`)
  // carries a draft model's costs.
  for (const ArmSource source : {ArmSource::kModel, ArmSource::kRetrieval, ArmSource::kNone})
    for (AutoArm& arm : arms_)
      if (LatencyProfile* p = arm.builder->latency_profile(); p && arm.source == source) return p;
  return nullptr;
}

ArmSource AutoTreeBuilder::source_of(const LatencyProfile* profile) const {
  for (const AutoArm& arm : arms_)
    if (arm.builder->latency_profile() == profile) return arm.source;
  return ArmSource::kNone;
}

Status AutoTreeBuilder::build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) {
  look_untaken_ = false;
  if (!profiles_shared_) {
    // The session seeded the first profile after construction; every arm starts from its
    // verification costs. Its draft costs are those of its own source's drafter.
    profiles_shared_ = true;
    if (LatencyProfile* seeded = latency_profile()) {
      const ArmSource seeded_source = source_of(seeded);
      for (AutoArm& arm : arms_)
        if (LatencyProfile* p = arm.builder->latency_profile(); p && p != seeded) {
          *p = *seeded;
          if (arm.source != seeded_source) p->clear_draft();
        }
    }
  }
  // Provisional tokens the last verification confirmed (drafted during its I/O by the arm
  // that built the last tree, the only one that can lend): that arm builds on them. The
  // drafter holds them as drafted, and no other arm would know to skip them; the cycle
  // counts in that arm's rate, which is how lending's payoff reaches the selector.
  if (ctx.carried) {
    const AutoArm& lender = arms_[static_cast<size_t>(built_by_)];
    SF_CHECK(lender.builder->accepts_carried(), "carried drafts for an arm that cannot take them");
    current_ = built_by_;
    return build_from_source(*lender.builder, lender.source, drafter, dynamic_cast<HybridDrafter*>(&drafter), ctx,
                             tree);
  }
  // Inside a stretch of plain decoding (below): no choice, no look, an empty tree; while
  // plain decoding stays the best arm. Its own slow cycles can put another arm ahead within
  // the stretch, and every further plain cycle would then be charged as exploration: on
  // stories260K at 0% (EMULATED 4 GB/s) a cold session's stretch ran 9 plain cycles after
  // CoordGen's trial had overtaken it, their 3.7 ms of regret spent the budget of the next
  // ~120 ms, and the draft model's arms waited 79 cycles of CoordGen's ~1.6 tokens for a
  // first trial (their cycles emit ~5).
  if (plain_stretch_left_ > 0 && selector_.best() == current_) {
    --plain_stretch_left_;
    built_by_ = current_;
    tree->clear();
    return Status::Ok();
  }
  plain_stretch_left_ = 0;
  current_ = selector_.choose(entry_seconds(drafter));
  built_by_ = current_;
  auto* hybrid = dynamic_cast<HybridDrafter*>(&drafter);
  bool looked = false;
  // Re-measuring the retrieval arm (explored, not the best): a look at its tree, verified
  // as the arm's own cycle only where the tree is expected to pay; else the best arm runs
  // and the look's walk along the committed tokens measures the retrieval arm (see the file
  // comment).
  if (hybrid && current_ == retrieval_arm_ && current_ != selector_.best() && selector_.rate(current_) > 0) {
    SF_ASSIGN_OR_RETURN(const bool own_cycle, remeasure_retrieval_by_look(*hybrid, ctx, tree));
    if (own_cycle) return Status::Ok();
    current_ = built_by_ = selector_.best();
    looked = true;
  }
  // A first trial (an arm with no rate yet) is deferred by the look at most
  // kMaxTrialDeferrals cycles in a row. At a session's start the best rate is plain
  // decoding's, which nearly every retrieval tree beats: EMULATED 25 MB/s at 0%, the look
  // put LEVER's first trial off for 30 cycles of ~2.5 tokens (LEVER's cycles emit ~6).
  const bool trial = selector_.rate(current_) <= 0;
  if (hybrid && !looked && arms_[static_cast<size_t>(current_)].source != ArmSource::kRetrieval &&
      !(trial && trial_deferrals_ >= kMaxTrialDeferrals)) {
    SF_ASSIGN_OR_RETURN(const bool taken, look_at_retrieval(*hybrid, ctx, tree, &looked));
    if (taken) {
      trial_deferrals_ = trial ? trial_deferrals_ + 1 : 0;
      return Status::Ok();
    }
  }
  trial_deferrals_ = 0;
  // Plain decoding chosen as the best arm (not explored), where a look at the context costs
  // too much of a cycle to make it (a plain pass is cheap: a resident target), runs a
  // stretch of kPlainStretch cycles without choosing again: on stories260K at a 100% budget
  // a plain cycle costs ~23 us, and choosing and the checks around it were ~1 us of it.
  // Exploring is put off by at most kPlainStretch - 1 cycles. Only where a plain cycle is
  // that cheap (kPlainStretchBelowSeconds): where it waits on streamed weights (~1 ms for
  // stories260K at 0%) choosing is ~0.1% of it, while a stretch put off each first trial of a
  // cold session: a trial's regret against plain decoding had spent the small budget of a
  // session's first milliseconds, plain decoding ran 16 cycles of 1 token, and the draft
  // model's arms (~5 tokens a cycle) waited.
  if (arms_[static_cast<size_t>(current_)].source == ArmSource::kNone && current_ == selector_.best() && !looked &&
      selector_.tokens_per_cycle(current_) / selector_.rate(current_) < kPlainStretchBelowSeconds)
    plain_stretch_left_ = kPlainStretch - 1;
  const AutoArm& arm = arms_[static_cast<size_t>(current_)];
  const DraftCounters before = drafter.draft_counters();
  const Status status = build_from_source(*arm.builder, arm.source, drafter, hybrid, ctx, tree);
  const DraftCounters& after = drafter.draft_counters();
  observe_catch_up(after.catch_up_tokens - before.catch_up_tokens, after.catch_up_seconds - before.catch_up_seconds);
  return status;
}

Status AutoTreeBuilder::build_from_source(TreeBuilder& builder, ArmSource source, Drafter& drafter,
                                          HybridDrafter* hybrid, const BuildContext& ctx, TokenTree* tree) {
  // With a draft model and retrieval (a HybridDrafter), an arm drafts from its own source
  // only; both keep following the commits. A lone drafter is the arms' only source.
  // The session's own choice (the draft model) is back for whatever method runs next.
  const bool model_before = hybrid && hybrid->drafts_from_model();
  const bool retrieval_before = hybrid && hybrid->drafts_from_retrieval();
  if (hybrid && source != ArmSource::kNone)
    hybrid->set_sources(source == ArmSource::kModel, source == ArmSource::kRetrieval);
  const Status status = builder.build(drafter, ctx, tree);
  if (hybrid) hybrid->set_sources(model_before, retrieval_before);
  return status;
}

Result<bool> AutoTreeBuilder::look_at_retrieval(HybridDrafter& hybrid, const BuildContext& ctx, TokenTree* tree,
                                                bool* looked) {
  // The rate the retrieval tree must beat: the best arm's, also when the chosen arm is being
  // explored. Measured against the explored arm's rate, the look took a retrieval tree on
  // most cycles that re-measured plain decoding or a short chain, and each such tree only
  // put the exploring off to the next cycle (EMULATED 25 MB/s at 0%, a warm-up and three
  // repetitions: 80 takes in 643 cycles, 2.9 tokens a cycle at 78 tokens/s against the
  // arms' 5.7 at 153; 43 takes against the best arm's rate, 31 of them one first trial's).
  // For an arm on its first trial too (no rate yet): a first trial that a good retrieval
  // tree defers is made on a later cycle, where the context offers less: on the synthetic 3B
  // at 0%, four model arms' first trials (one token each) fell on the cycles where the
  // prompt had started to repeat itself, and CoordGen's trees emitted 2-4 there.
  const int top = selector_.best();
  if (!retrieval_builder_ || top < 0) return false;
  const double rate = selector_.rate(top);
  // Looking costs the retrieval drafter's catch-up and a few automaton walks: worth it only
  // where that is a small share of the cycle it may replace (not at a 100% budget on a
  // small model, where a plain token costs ~25 us); re-measured now and then.
  const int replaced = selector_.rate(current_) > 0 ? current_ : top;
  const double cycle_seconds = selector_.tokens_per_cycle(replaced) / selector_.rate(replaced);
  ++cycles_since_look_;
  if (look_seconds_ > kLookShare * cycle_seconds && cycles_since_look_ < kLookAgainEvery) return false;
  *looked = true;
  SF_RETURN_IF_ERROR(build_look(hybrid, ctx, tree));
  if (tree->size() > 0 && retrieval_builder_->expected_rate() > rate) {
    built_by_ = retrieval_arm_;
    return true;
  }
  leave_look_untaken(hybrid, tree);
  return false;
}

Result<bool> AutoTreeBuilder::remeasure_retrieval_by_look(HybridDrafter& hybrid, const BuildContext& ctx,
                                                          TokenTree* tree) {
  SF_RETURN_IF_ERROR(build_look(hybrid, ctx, tree));
  if (tree->size() > 0 && retrieval_builder_->expected_rate() > selector_.rate(selector_.best())) return true;
  leave_look_untaken(hybrid, tree);
  selector_.mark_measured(retrieval_arm_);
  return false;
}

Status AutoTreeBuilder::build_look(HybridDrafter& hybrid, const BuildContext& ctx, TokenTree* tree) {
  cycles_since_look_ = 0;
  const Stopwatch timer;
  SF_RETURN_IF_ERROR(build_from_source(*retrieval_builder_, ArmSource::kRetrieval, hybrid, &hybrid, ctx, tree));
  const double seconds = timer.elapsed();
  look_build_seconds_ = seconds;
  look_seconds_ = look_seconds_ > 0 ? 0.8 * look_seconds_ + 0.2 * seconds : seconds;
  return Status::Ok();
}

void AutoTreeBuilder::leave_look_untaken(HybridDrafter& hybrid, TokenTree* tree) {
  // observe() lets the calibration learn from the target's tokens all the same. Swapped
  // rather than copied (a look is made every cycle at a streamed budget); the caller's tree
  // is cleared for the chosen arm.
  std::swap(look_tree_, *tree);
  look_untaken_ = true;
  tree->clear();
  hybrid.forget_retrieval_cycle();
}

AutoTreeBuilder::LookWalk AutoTreeBuilder::observe_untaken_look(const std::vector<VisitedRow>& visited) {
  // The rows verification would have visited: from the root, each committed token in turn,
  // as long as the retrieval tree has the child it names.
  std::vector<VisitedRow> rows;
  LookWalk walk;
  int32_t node = TokenTree::kRoot;
  for (const VisitedRow& v : visited) {
    if (v.target_token < 0) break;
    rows.push_back({node, v.target_token});
    node = look_tree_.find_child(node, v.target_token);
    if (node < 0) break;
    ++walk.accepted;
  }
  // Past the committed tokens, with children left to try: the tree might have gone deeper.
  walk.cut_short = node >= 0 && !look_tree_.children(node).empty();
  walk.node = node;
  if (AcceptanceCalibration* calibration = retrieval_builder_->acceptance_calibration())
    calibration->observe(look_tree_, rows);
  return walk;
}

void AutoTreeBuilder::infer_retrieval_cycle(const LookWalk& walk, const CycleStats& stats) {
  // A pruned pass, or one beside Mirror-SD's rollouts, is not a full pass's cost.
  if (stats.rows_pruned > 0 || arms_[static_cast<size_t>(built_by_)].builder->wants_parallel_rollouts()) return;
  const LatencyProfile* profile = latency_profile();
  if (!profile || !profile->has_verify_data()) return;
  // The retrieval tree's rows instead of the run tree's, at the profile's cost of a row
  // there (as for the shorter chains: a fitted slope, not the difference of two cells).
  const int rows_run = stats.tree_nodes + 1;
  const int rows_look = look_tree_.size() + 1;
  const double row = profile->marginal_seconds((rows_run + rows_look) / 2 + 1, stats.context);
  double verify = stats.verify_seconds + (rows_look - rows_run) * row;
  if (rows_look < rows_run) verify = std::max(verify, stats.verify_seconds * static_cast<double>(rows_look) / rows_run);
  // Its drafting was the look alone (a part of this cycle's drafting).
  const double draft = std::min(look_build_seconds_, stats.draft_seconds);
  verify = verify_with_less_drafting(stats, draft, verify);
  // A walk cut short says only that the tree would have emitted at least so many tokens
  // (left out then, the arm was inferred on its shorter trees only): it goes on along the
  // next cycles' tokens, one such walk at a time.
  if (walk.cut_short) {
    if (!pending_walk_) {
      pending_walk_ = PendingWalk{walk.node, walk.accepted, draft, draft + verify};
      std::swap(walk_tree_, look_tree_);
    }
    return;
  }
  selector_.observe_inferred(retrieval_arm_, walk.accepted + 1.0, draft + verify, draft);
}

void AutoTreeBuilder::continue_pending_walk(const std::vector<VisitedRow>& visited) {
  PendingWalk& walk = *pending_walk_;
  for (const VisitedRow& v : visited) {
    if (v.target_token < 0) {  // a token not known: the walk cannot go on
      pending_walk_.reset();
      return;
    }
    const int32_t child = walk_tree_.find_child(walk.node, v.target_token);
    // Off the tree: verifying it would have stopped here, the target's token its bonus; or
    // at a leaf, whose next token would have been the bonus.
    if (child >= 0) ++walk.accepted;
    if (child < 0 || walk_tree_.children(child).empty()) {
      selector_.observe_inferred(retrieval_arm_, walk.accepted + 1.0, walk.seconds, walk.draft_seconds);
      pending_walk_.reset();
      return;
    }
    walk.node = child;
  }
}

void AutoTreeBuilder::begin_generation() {
  plain_stretch_left_ = 0;  // a new text: choose afresh (it may repeat itself)
  pending_walk_.reset();    // its tokens were the last text's
  first_cycle_of_generation_ = true;
  for (AutoArm& arm : arms_)
    if (AcceptanceCalibration* c = arm.builder->acceptance_calibration(); c && arm.source == ArmSource::kRetrieval)
      c->begin_text();
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
  const bool first_of_prompt = first_cycle_of_generation_;
  first_cycle_of_generation_ = false;
  // An earlier look's walk goes on along this cycle's tokens, before this cycle's look.
  if (pending_walk_) continue_pending_walk(stats.visited);
  std::optional<LookWalk> untaken_look;
  if (look_untaken_) {
    look_untaken_ = false;
    untaken_look = observe_untaken_look(stats.visited);
  }
  // The builder of the tree learns from it.
  const AutoArm& current = arms_[static_cast<size_t>(built_by_)];
  TreeBuilder& chosen = *current.builder;
  const bool cold = calibration_cold(static_cast<size_t>(built_by_));  // when its tree was built
  chosen.observe(tree, stats);
  // A pass beside Mirror-SD's rollouts ran on the target's narrower pool: not the cost of
  // a pass of the other arms either.
  const bool narrowed = chosen.wants_parallel_rollouts();
  for (AutoArm& arm : arms_) {
    if (arm.builder.get() == &chosen) continue;
    // A pruned pass ran part of its rows through part of the layers: not a full pass's cost.
    if (LatencyProfile* p = arm.builder->latency_profile(); p && stats.rows_pruned == 0 && !narrowed)
      p->observe_verify(stats.tree_nodes + 1, stats.context, stats.verify_seconds);
    // How often the target picks a draft token of a given probability does not depend on
    // which arm put it in the tree, as long as the same drafter gave that probability: an
    // arm that runs rarely would otherwise shape its trees with a calibration learnt from a
    // handful of its own cycles. A retrieval probability says something else than a draft
    // model's, so the sources keep their own.
    if (arm.source != current.source) continue;
    if (AcceptanceCalibration* c = arm.builder->acceptance_calibration()) c->observe(tree, stats.visited);
  }
  // A cycle whose retrieval tree was taken in place of the chosen arm's measures neither arm:
  // charged to the chosen arm, the retrieval trees' misses (taken on an optimistic early
  // calibration) pulled down the rate of whichever arm ran most, the best one, and auto
  // settled on a worse arm (EMULATED 25 MB/s: EdgeLLM's trees at 0.84x LEVER in 3 of 4
  // rows, against 0 of 4 before the look). Whether to take such a tree is the retrieval
  // calibration's call, and it learns from every tree taken.
  if (built_by_ != current_) {
    forget_cold_cycles();
    return;
  }
  // The first cycle after a prompt's prefill pays one-off costs that belong to no arm (the
  // pool's threads woken after the prefill, caches refilled after its batch): up to 4x a
  // plain pass on stories260K at a 100% budget (135 us against ~30). Taken as an arm's first
  // trial, its only evidence, it made the arm look that slow: plain decoding, the first arm
  // a cold session tries, then counted as far behind CoordGen's empty retrieval trees and
  // was re-measured only from the far share: CoordGen ran in stretches of 175-492 cycles (a
  // warm-up and 3 repetitions of 1,024 tokens, traced), and the profile carried that into
  // the next session (whose first repetition ran at ~0.75x the later ones', 6 runs of 6).
  // So such a cycle counts as time and regret but not as evidence, and the arm is tried
  // again next cycle. An arm with evidence counts it, capped as an outlier
  // (ArmSelector::observe): left out too, an arm explored at a prompt's start (where the
  // draft model's catch-up is cheapest) was explored twice, and auto with its profile ran
  // at ~0.955x Flash-AR against ~0.97x before (6 runs of 6). Once per arm: where every
  // generation is one cycle long (a prompt's first token comes from its prefill, so a
  // generation of 2 tokens is one cycle), an arm whose first cycles were all left out
  // would never be measured, and the selector retries such an arm at once. (An arm with no
  // rate that has run a cycle had its first one left out: every other cycle run is evidence.)
  if (first_of_prompt && selector_.rate(current_) <= 0 && selector_.cycles(current_) == 0) {
    selector_.observe_time(current_, stats.accepted + 1.0, stats.draft_seconds + stats.verify_seconds);
    forget_cold_cycles();
    return;
  }
  if (current.prune && stats.pruning_offered)
    prune_switches_[static_cast<size_t>(current_)].observe(stats.accepted + 1.0,
                                                           stats.draft_seconds + stats.verify_seconds);
  // The arm's evidence before its first cycle under a cold calibration (before_cold_).
  std::optional<ArmSelector::Evidence>& before = before_cold_[static_cast<size_t>(current_)];
  if (cold && !before) before = selector_.evidence(current_);
  // Every cycle emits its accepted nodes and a bonus token.
  // The drafting is the arm's own work (LEVER's periodic probe trees, the draft model
  // catching up after plain decoding): never capped as an outlier.
  selector_.observe(current_, stats.accepted + 1.0, stats.draft_seconds + stats.verify_seconds, stats.draft_seconds);
  observe_shorter_chains(tree, stats);
  if (untaken_look) infer_retrieval_cycle(*untaken_look, stats);
  forget_cold_cycles();
}

bool AutoTreeBuilder::calibration_cold(size_t arm) const {
  if (arms_[arm].source != ArmSource::kModel) return false;
  const AcceptanceCalibration* c = arms_[arm].builder->acceptance_calibration();
  return c && c->rows_observed() < kWarmCalibrationRows;
}

void AutoTreeBuilder::forget_cold_cycles() {
  for (size_t a = 0; a < arms_.size(); ++a) {
    if (!before_cold_[a] || calibration_cold(a)) continue;
    ArmSelector::Evidence back = *before_cold_[a];
    // An arm measured only under the cold calibration keeps those cycles as one cycle's
    // evidence: a lower bound (the priors shape worse trees than a warm calibration), thin
    // enough to be re-measured soon. Forgotten altogether, it was an arm never run, whose
    // trial waits on the draft model's catch-up fitting in the regret budget: in a cold
    // session at 0% (EMULATED 4 GB/s), LEVER's cold cycles (5 tokens in 1.7 ms) were
    // forgotten once the calibration warmed, plain decoding (1 token in ~1.1 ms) was then the
    // only measured arm, and it ran ~120 cycles while every model arm's catch-up grew faster
    // than the budget.
    if (back.recent.empty()) {
      const ArmSelector::Evidence now = selector_.evidence(static_cast<int>(a));
      if (!now.recent.empty()) back = {now.recent.at_most(1), now.lasting.at_most(1)};
    }
    selector_.restore(static_cast<int>(a), back);
    before_cold_[a].reset();
  }
}

void AutoTreeBuilder::observe_shorter_chains(const TokenTree& tree, const CycleStats& stats) {
  const AutoArm& chosen = arms_[static_cast<size_t>(current_)];
  const int k_run = chosen.chain_length;
  // A full chain only: one trimmed at the context's end says nothing of its missing nodes.
  if (k_run < 2 || tree.size() != k_run || tree.max_depth() != k_run || stats.rows_pruned > 0) return;
  const LatencyProfile* profile = latency_profile();
  if (!profile || !profile->has_verify_data()) return;
  // One draft step. A shorter chain saves its last k_run - k steps; the first one, which
  // also feeds the draft the last cycle's tokens, every chain pays. Should the profile's step
  // be too dear, the estimate is never below the chain's proportional share of the drafting.
  const double step = profile->draft_pass_seconds() + profile->draft_row_seconds();
  for (size_t a = 0; a < arms_.size(); ++a) {
    const AutoArm& arm = arms_[a];
    const int k = arm.chain_length;
    if (static_cast<int>(a) == current_ || k < 1 || k >= k_run || arm.source != chosen.source) continue;
    const double share = static_cast<double>(k) / k_run;
    const double draft = std::max(share * stats.draft_seconds, stats.draft_seconds - (k_run - k) * step);
    // The rows it would not have verified, at the profile's cost of a row there (a slope
    // fitted over the measured row counts: at a streamed budget the difference of two
    // cells, each a mean of I/O-bound passes, was mostly noise and often zero).
    const double rows_saved = (k_run - k) * profile->marginal_seconds((k + k_run) / 2 + 1, stats.context);
    const double verify = verify_with_less_drafting(
        stats, draft, std::max(share * stats.verify_seconds, stats.verify_seconds - rows_saved));
    selector_.observe_inferred(static_cast<int>(a), std::min(stats.accepted, k) + 1.0, draft + verify, draft);
  }
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
  // A pruning switch's settings, as "<arm>/prune" and "<arm>/no-prune" (per block of cycles).
  for (size_t a = 0; a < arms_.size(); ++a)
    for (const bool on : {true, false})
      if (arms_[a].prune && !prune_switches_[a].lasting_evidence(on).empty())
        p.arms.emplace_back(prune_setting_name(arms_[a].name, on), prune_switches_[a].lasting_evidence(on));
  return p;
}

void AutoTreeBuilder::start_from(const AutoProfile& profile) {
  catch_up_per_token_ = profile.catch_up_seconds_per_token;
  for (int a = 0; a < selector_.n_arms(); ++a)
    if (const ArmEvidence* e = profile.find(arms_[static_cast<size_t>(a)].name)) selector_.start_from(a, *e);
  for (size_t a = 0; a < arms_.size(); ++a)
    for (const bool on : {true, false})
      if (const ArmEvidence* e = profile.find(prune_setting_name(arms_[a].name, on)); e && arms_[a].prune)
        prune_switches_[a].start_from(on, *e);
}

}  // namespace sf
