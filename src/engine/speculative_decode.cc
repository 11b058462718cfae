// Session::decode_speculative: the draft -> verify -> commit cycle.
//
// The target always holds the committed sequence except its last token (the "pending"
// token); the first is sampled from the prefill's logits, as in plain decoding. Each cycle
// the tree builder drafts a tree below the pending token (asking the drafter for the nodes
// it chooses); the target runs [pending, tree nodes] as one batch (one streamed pass over
// its layers). With pruning, the pass stops at the exit layer, the pruner drops rows, and
// the later layers run over the kept rows only; the verifier then walks the kept tree,
// computing the LM head only for the rows it visits, and the accepted path plus a bonus
// token are committed in both caches. With an empty tree this is exactly plain decoding,
// one token per pass.
//
// EdgeLLM's provisional generation: when the builder names an anchor leaf and the target
// streams, a background worker drafts below the anchor while the pass waits for weights
// (provisional_generation.h); tokens the verification confirms start the next tree.
#include <algorithm>
#include <atomic>

#include "base/log.h"
#include "base/timer.h"
#include "engine/emit_tokens.h"
#include "engine/session.h"
#include "spec/provisional_generation.h"
#include "spec/tree_batch.h"
#include "spec/verifier.h"

namespace sf {

namespace {
// Drafting in the background during one verification pass. The destructor ends it on
// every path (errors included): the worker stops after its current step and is joined
// before the job, the drafter or the streamer's listener go away.
class ProvisionalRun {
 public:
  ProvisionalRun(BackgroundWorker& worker, ComputeGate& gate, ThreadPool& pool, LayerStreamer& streamer,
                 Drafter& drafter, ProvisionalJob* job)
      : worker_(worker), gate_(gate), streamer_(streamer), drafter_(drafter) {
    lent_before_ = gate.lent_seconds();
    gate_.begin_pass();
    streamer_.set_stall_listener(&gate_);
    drafter_.set_compute_gate(&gate_);
    drafter_.set_thread_pool(&pool);  // the target's pool runs the pass
    worker_.run([this, job] { run_provisional(drafter_, gate_, stop_, job); });
  }
  ~ProvisionalRun() { finish(); }
  // Stops the worker and waits for it; returns the seconds the cores were lent.
  double finish() {
    if (!finished_) {
      finished_ = true;
      stop_.store(true, std::memory_order_release);
      gate_.end_pass();
      worker_.wait();
      streamer_.set_stall_listener(nullptr);
      drafter_.set_compute_gate(nullptr);
      drafter_.set_thread_pool(nullptr);
    }
    return gate_.lent_seconds() - lent_before_;
  }

 private:
  BackgroundWorker& worker_;
  ComputeGate& gate_;
  LayerStreamer& streamer_;
  Drafter& drafter_;
  std::atomic<bool> stop_{false};
  bool finished_ = false;
  double lent_before_ = 0;
};

// auto's mirror arm: for one verification pass and its rollouts, the target runs on the
// cores the draft does not take and the draft on its own (Session::rollout_target_pool_,
// draft_pool_); end() (or the destructor, on every path) gives both the session's pool
// back. With no narrower pool (--spec mirror, whose split is the session's) it does nothing.
class RolloutPlacement {
 public:
  RolloutPlacement(ThreadPool* target_pool, ThreadPool& session_pool, ThreadPool* draft_pool, ModelRunner& target,
                   Drafter& drafter)
      : session_pool_(session_pool), target_(target), drafter_(drafter), active_(target_pool && draft_pool) {
    if (!active_) return;
    target_.set_pool(*target_pool);
    drafter_.set_thread_pool(draft_pool);
  }
  ~RolloutPlacement() { end(); }
  RolloutPlacement(const RolloutPlacement&) = delete;
  RolloutPlacement& operator=(const RolloutPlacement&) = delete;
  // Call once the rollouts have stopped.
  void end() {
    if (!active_) return;
    active_ = false;
    target_.set_pool(session_pool_);
    drafter_.set_thread_pool(nullptr);
  }

 private:
  ThreadPool& session_pool_;
  ModelRunner& target_;
  Drafter& drafter_;
  bool active_;
};
}  // namespace

Status Session::decode_speculative(Slot& slot, TreeBuilder& builder, const TreePruner* pruner,
                                   const std::vector<int32_t>& prompt, int n_predict, const SamplingParams& sampling,
                                   bool ignore_eos, const std::function<bool(int32_t, const std::string&)>& on_token,
                                   GenerationStats* stats) {
  ModelRunner& target = *slot.target;
  Drafter& drafter = *slot.drafter;
  const int n_vocab = model_->hparams().n_vocab;
  const int n_embd = model_->hparams().n_embd;
  Sampler verify_sampler(sampling);
  SamplingParams draft_params = sampling;
  draft_params.seed = sampling.seed ^ 0x9E3779B97F4A7C15ull;  // the draft's own random stream
  Sampler draft_sampler(draft_params);
  StreamingDecoder decoder(*tokenizer_);
  std::vector<int32_t> history = prompt;

  // The whole prompt is prefilled, and the first token sampled from its last row, as plain
  // decoding does; the first cycle's tree then hangs below that token. (Until 2026-12-07 the
  // prefill stopped one token short and the first cycle verified the last prompt token as
  // its root: one more target pass per generation, which at a 0% budget streams every weight
  // again before the first token, for a token the prefill's pass had already computed.)
  Stopwatch prefill_timer;
  const size_t reused = reuse_cached_prefix(target, prompt, prompt.size() - 1);
  // A drafter that calibrates on the prefill's predictions gets each position's top tokens
  // (their cost is part of the prefill time) but the last, whose next token is generated.
  const int prefill_k = drafter.prefill_top_k();
  std::vector<std::vector<TokenProb>> prefill_rows;
  std::vector<float> logits;
  const std::vector<int32_t> to_prefill(prompt.begin() + static_cast<std::ptrdiff_t>(reused), prompt.end());
  if (prefill_k > 0) {
    SF_RETURN_IF_ERROR(evaluate_top_k(target, to_prefill, prefill_k, &prefill_rows, &logits));
    prefill_rows.pop_back();
  } else {
    SF_RETURN_IF_ERROR(evaluate(target, to_prefill, false, &logits));
  }
  stats->reused_prompt_tokens = static_cast<int>(reused);
  stats->first_token_from_prefill = true;
  drafter.reset(prompt);
  if (prefill_k > 0) drafter.observe_prefill(prompt, reused, prefill_rows);
  builder.begin_generation();
  stats->prefill_seconds = prefill_timer.elapsed();

  Stopwatch decode_timer;
  const uint64_t weight_before = target.counters().weight_bytes;
  const uint64_t stream_before = streamer_ ? streamer_->stats().bytes_read : 0;
  const double stall_before_decode = streamer_ ? streamer_->stats().io_stall_seconds : 0;
  // The first token: a cycle of plain decoding whose pass was the prefill's. The drafter is
  // told as of a plain cycle (an empty tree, the token as its bonus): it catches up on it, as
  // on any token it did not draft, when it drafts next.
  int32_t pending = verify_sampler.sample(logits.data(), n_vocab, history);
  bool done = n_predict <= 0;
  if (!done) {
    const TokenTree no_tree;
    SF_RETURN_IF_ERROR(drafter.begin_cycle(history, sampling, draft_sampler));
    drafter.commit(no_tree, {}, pending);
    done =
        emit_cycle_tokens(no_tree, {}, pending, *tokenizer_, ignore_eos, n_predict, decoder, on_token, &history, stats);
  }
  TokenTree tree, kept_tree;
  std::vector<int32_t> kept_to_node;  // node of `tree` for each node of kept_tree
  std::vector<float> row_buffer(static_cast<size_t>(n_vocab));
  // What every cycle refills, kept across cycles.
  ForwardBatch batch;
  std::vector<int32_t> accepted;       // nodes of `tree` on the accepted path
  std::vector<int32_t> cells, tokens;  // what the target commits
  std::vector<VisitedRow> visited;     // lent to each cycle's stats for the builder's observe
  // At most one cycle a token; a long generation reserves no more than 4,096 ahead of use.
  stats->cycles.reserve(stats->cycles.size() + static_cast<size_t>(std::clamp(n_predict, 0, 4096)));
  CarriedDrafts carried;  // provisional tokens the last verification confirmed
  bool have_carried = false;
  while (!done) {
    const int64_t room = target.n_ctx() - target.n_past();
    if (room < 1) {
      SF_LOG_WARN("context of %d tokens is full; stopping generation", target.n_ctx());
      break;
    }
    CycleStats cycle;
    cycle.context = target.n_past();
    Stopwatch draft_timer;
    BuildContext ctx;
    ctx.max_nodes = room - 1;  // one cell is the pending token's
    ctx.context = target.n_past();
    ctx.sampling = sampling;
    ctx.draft_sampler = &draft_sampler;
    ctx.hidden_draft_seconds = streamer_ ? streamer_->pending_io_seconds() : 0;
    if (have_carried) {
      ctx.carried = &carried;
      cycle.carried_nodes = carried.tree.size();
    }
    cycle.threshold = builder.threshold();
    cycle.hidden_io_seconds = ctx.hidden_draft_seconds;
    SF_RETURN_IF_ERROR(drafter.begin_cycle(history, sampling, draft_sampler));
    SF_RETURN_IF_ERROR(builder.build(drafter, ctx, &tree));
    have_carried = false;
    cycle.draft_seconds = draft_timer.elapsed();
    cycle.policy = builder.policy();
    cycle.tree_nodes = tree.size();
    cycle.max_depth = tree.max_depth();

    Stopwatch verify_timer;
    const double stall_before = streamer_ ? streamer_->stats().io_stall_seconds : 0;
    const int32_t n_past = target.n_past();
    PruneDecision decision;
    LayerTap tap;
    cycle.pruning_offered = pruner && tree.size() > 0;
    if (cycle.pruning_offered && builder.wants_pruning()) {
      tap.layer = pruner->config().exit_layer;
      tap.fn = [&](const float* hidden, const std::vector<int64_t>& rows, std::vector<int64_t>* keep) {
        decision = pruner->decide(tree, [&](int64_t row) { return hidden + row * n_embd; });
        if (decision.kept == tree.size() || pruner->config().shadow) return Status::Ok();
        for (int64_t r : rows)
          if (r == 0 || decision.keep[r - 1]) keep->push_back(r);
        return Status::Ok();
      };
    }
    // Provisional generation runs from here until the acceptance walk is done.
    std::unique_ptr<ProvisionalJob> job;
    std::unique_ptr<ProvisionalRun> provisional;
    int32_t anchor = TokenTree::kRoot;
    const NodeDistribution* anchor_dist = nullptr;
    if (ahead_pool_ && streamer_ && !tree.empty() && builder.accepts_carried() &&
        builder.provisional_anchor(&anchor, &anchor_dist)) {
      job = std::make_unique<ProvisionalJob>();
      job->tree = tree;
      job->anchor = anchor;
      job->anchor_dist = anchor_dist;
      job->max_tokens = options_.spec.edgellm.provisional_max;
      job->min_confidence = std::max(0.0, builder.threshold());
      provisional = std::make_unique<ProvisionalRun>(*draft_worker_, *compute_gate_, *ahead_pool_, *streamer_, drafter,
                                                     job.get());
    }
    // Mirror-SD: the token channel at the exit layer launches rollouts of the next window
    // on the draft's threads while the target finishes the pass (mirror_rollout.h). Not
    // near the end of the context, where a carried window could not be extended.
    MirrorSpeculation* mirror = mirror_ && !tap.fn && !tree.empty() && ctx.max_nodes >= 2 * (tree.size() + 1) &&
                                        builder.wants_parallel_rollouts()
                                    ? mirror_.get()
                                    : nullptr;
    // Declared before the guard, so that on an error path the rollouts stop before the
    // pools are given back.
    RolloutPlacement placement(mirror ? rollout_target_pool_.get() : nullptr, pool_, draft_pool_.get(), target,
                               drafter);
    MirrorCycleGuard mirror_guard(mirror);
    if (mirror) mirror->begin(drafter, tree, sampling, n_past);
    fill_tree_batch(tree, pending, n_past, &batch);
    SF_RETURN_IF_ERROR(target.forward(batch, tap.fn ? &tap : (mirror ? mirror->tap() : nullptr)));
    // The verifier walks the tree of rows that ran every layer.
    // (Shadow pruning decides but verifies the whole tree, to measure what pruning keeps.)
    const bool pruned = tap.fn && !pruner->config().shadow && decision.kept < tree.size();
    if (pruned) kept_tree = tree.subtree(decision.keep, &kept_to_node);
    const TokenTree& verified = pruned ? kept_tree : tree;
    auto node_of = [&](int32_t v) { return pruned ? kept_to_node[v] : v; };
    SF_RETURN_IF_ERROR(target.begin_head());
    const VerifyResult result = verify_tree(
        verified, n_vocab,
        [&](int64_t row) {
          target.row_logits(row == 0 ? 0 : tree_row(node_of(static_cast<int32_t>(row - 1))), row_buffer.data());
          return row_buffer.data();
        },
        verify_sampler, history);
    // A drafter that reuses rejected drafts asks for the target's predictions on rows the
    // walk did not need (each one more LM-head row, counted as such).
    int32_t extra_head_rows = 0;
    if (drafter.wants_rejected_predictions() && !pruned && tree.size() > 0) {
      std::vector<int32_t> accepted_nodes;
      for (int32_t v : result.accepted) accepted_nodes.push_back(node_of(v));
      drafter.observe_rejected(tree, accepted_nodes, [&](int32_t node) {
        target.row_logits(tree_row(node), row_buffer.data());
        ++extra_head_rows;
        return argmax(row_buffer.data(), n_vocab);
      });
    }
    target.end_head();
    accepted.clear();
    for (int32_t v : result.accepted) accepted.push_back(node_of(v));
    cells.assign(1, n_past);
    tokens.assign(1, pending);
    for (int32_t node : accepted) {
      cells.push_back(n_past + static_cast<int32_t>(tree_row(node)));
      tokens.push_back(tree.node(node).token);
    }
    target.commit(cells, tokens);
    bool drafter_committed = false;
    if (provisional) {
      const double lent = provisional->finish();
      SF_RETURN_IF_ERROR(job->status.with_context("provisional drafting"));
      cycle.provisional_tokens = static_cast<int32_t>(job->chain.size());
      cycle.provisional_seconds = job->draft_seconds;
      cycle.provisional_kept = carry_provisional(drafter, *job, accepted, result.bonus, &carried, &drafter_committed);
      have_carried = drafter_committed && builder.accepts_carried();
      stats->spec.provisional_lent_seconds += lent;
      ++stats->spec.provisional_cycles;
    }
    if (mirror) {
      SF_RETURN_IF_ERROR(
          mirror->finish(drafter, target.last_pass(), accepted, result.bonus, &carried, &drafter_committed, &cycle));
      have_carried = drafter_committed;
      placement.end();
    }
    if (!drafter_committed)
      drafter.commit(job ? job->tree : (mirror ? mirror->drafted_tree() : tree), accepted, result.bonus);
    cycle.verify_seconds = verify_timer.elapsed();
    cycle.io_stall_seconds = (streamer_ ? streamer_->stats().io_stall_seconds : 0) - stall_before;
    cycle.rows_verified = tree.size() + 1;
    cycle.rows_pruned = tree.size() - (pruned ? kept_tree.size() : tree.size());
    cycle.accepted = static_cast<int32_t>(accepted.size());
    cycle.head_rows = static_cast<int32_t>(result.rows_visited) + extra_head_rows;
    // What the target chose at each visited row: the next accepted token, then the bonus.
    visited.clear();
    for (size_t i = 0; i <= accepted.size(); ++i)
      visited.push_back({i == 0 ? TokenTree::kRoot : accepted[i - 1],
                         i < accepted.size() ? tree.node(accepted[i]).token : result.bonus});
    cycle.visited.swap(visited);
    builder.observe(tree, cycle);
    cycle.visited.swap(visited);  // the kept stats do not hold it

    SpecStats& sp = stats->spec;
    ++sp.cycles;
    sp.draft_tokens += static_cast<uint64_t>(tree.size());
    sp.accepted_draft_tokens += accepted.size();
    sp.rows_verified += static_cast<uint64_t>(cycle.rows_verified);
    sp.rows_pruned += static_cast<uint64_t>(cycle.rows_pruned);
    sp.head_rows += static_cast<uint64_t>(cycle.head_rows);
    sp.head_rows_saved += static_cast<uint64_t>(std::max(0, cycle.rows_verified - cycle.rows_pruned - cycle.head_rows));
    sp.max_tree_nodes = std::max<uint64_t>(sp.max_tree_nodes, static_cast<uint64_t>(tree.size()));
    if (pruner && pruner->config().shadow && !tap.fn) {
      sp.shadow_rows_kept += static_cast<uint64_t>(cycle.rows_verified);  // an empty tree: nothing to prune
    } else if (tap.fn && pruner->config().shadow) {
      // Greedy: the walk over the pruned tree follows the same path until the first
      // accepted node the decision dropped.
      sp.shadow_rows_kept += static_cast<uint64_t>(decision.kept) + 1;
      size_t kept_prefix = 0;
      while (kept_prefix < accepted.size() && decision.keep[accepted[kept_prefix]]) ++kept_prefix;
      sp.shadow_accepted += kept_prefix;
    }
    sp.draft_seconds += cycle.draft_seconds;
    sp.verify_seconds += cycle.verify_seconds;
    sp.verify_io_stall_seconds += cycle.io_stall_seconds;
    sp.provisional_tokens += static_cast<uint64_t>(cycle.provisional_tokens);
    sp.provisional_kept += static_cast<uint64_t>(cycle.provisional_kept);
    sp.provisional_seconds += cycle.provisional_seconds;
    // --spec mirror counts every cycle in Mirror-SD's latency (eq. 10); auto its mirror arm's.
    if (mirror || (mirror_ && !rollout_target_pool_)) add_mirror_stats(cycle, &sp);
    stats->cycles.push_back(std::move(cycle));

    done = emit_cycle_tokens(tree, accepted, result.bonus, *tokenizer_, ignore_eos, n_predict, decoder, on_token,
                             &history, stats);
    pending = result.bonus;
  }
  const std::string tail = decoder.flush();
  if (!tail.empty()) on_token(-1, tail);
  stats->decode_seconds = decode_timer.elapsed();
  // The draft model's own weight reads are not counted here (its runner is the drafter's).
  stats->decode_weight_bytes = target.counters().weight_bytes - weight_before;
  stats->decode_stream_bytes = (streamer_ ? streamer_->stats().bytes_read : 0) - stream_before;
  stats->decode_io_stall_seconds = (streamer_ ? streamer_->stats().io_stall_seconds : 0) - stall_before_decode;
  return drafter.end_sequence(history, prompt.size());
}

}  // namespace sf
