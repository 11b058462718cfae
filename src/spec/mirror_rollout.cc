#include "spec/mirror_rollout.h"

#include <algorithm>
#include <cmath>

#include "base/timer.h"
#include "ops/norm.h"
#include "ops/top_k.h"
#include "spec/mirror_chain_builder.h"
#include "spec/provisional_generation.h"

namespace sf {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

int32_t keyed_draw(const std::vector<TokenProb>& dist, uint64_t seed, int64_t position) {
  const uint64_t bits = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(position)));
  const double u = static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
  double total = 0;
  for (const auto& t : dist) total += t.p;
  double cum = 0;
  for (const auto& t : dist) {
    cum += t.p;
    if (u * total < cum) return t.id;
  }
  return dist.back().id;
}

uint64_t mirror_draft_seed(const SamplingParams& sampling) { return splitmix64(sampling.seed ^ 0x6D6972726F72ull); }

int mirror_exit_layer(const MirrorConfig& config, int n_layer) {
  int layer = config.exit_layer >= 0 ? config.exit_layer : (n_layer * config.exit_percent + 50) / 100;
  return std::clamp(layer, 1, std::max(1, n_layer - 1));
}

MirrorPlacement mirror_placement(int n_threads, int draft_threads) {
  const int total = n_threads > 0 ? n_threads : ThreadPool::hardware_threads();
  MirrorPlacement p;
  p.draft_threads = draft_threads > 0 ? draft_threads : std::max(1, total / 4);
  p.target_threads = std::max(1, total - p.draft_threads);
  return p;
}

bool auto_has_mirror_arm(int n_threads, int draft_threads) {
  return mirror_placement(n_threads, draft_threads).target_threads >= 3;
}

void TokenChannel::compute(const float* hidden, int64_t n_rows, int k) {
  const ModelHParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  const int64_t n_vocab = w.output.rows;
  normed_.resize(static_cast<size_t>(n_rows * hp.n_embd));
  logits_.resize(static_cast<size_t>(n_rows * n_vocab));
  for (int64_t r = 0; r < n_rows; ++r)
    rms_norm(hidden + r * hp.n_embd, w.output_norm, hp.rms_eps, hp.n_embd, normed_.data() + r * hp.n_embd);
  matmul(w.output, normed_.data(), n_rows, hp.n_embd, logits_.data(), n_vocab, pool_, scratch_);
  top_.assign(static_cast<size_t>(n_rows), {});
  log_z_.assign(static_cast<size_t>(n_rows), 0.0f);
  n_vocab_ = n_vocab;
  std::vector<int32_t> ids;
  const int kk = static_cast<int>(std::min<int64_t>(k, n_vocab));
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* l = logits_.data() + r * n_vocab;
    top_k_indices(l, n_vocab, kk, &ids);
    const float max = l[ids[0]];
    double sum = 0;
    for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(l[i] - max));
    const float log_z = max + static_cast<float>(std::log(sum));
    log_z_[static_cast<size_t>(r)] = log_z;
    auto& top = top_[static_cast<size_t>(r)];
    for (int i = 0; i < kk; ++i) top.push_back({ids[static_cast<size_t>(i)], l[ids[static_cast<size_t>(i)]] - log_z});
  }
}

double TokenChannel::log_prob(int64_t row, int32_t token) const {
  return static_cast<double>(logits_[static_cast<size_t>(row * n_vocab_ + token)] - log_z_[static_cast<size_t>(row)]);
}

std::vector<RolloutCandidate> choose_candidates(const TokenTree& tree, const TokenChannel& channel, int kappa) {
  // log P(path to u accepted) for every node (index u + 1), parents first.
  std::vector<double> path(static_cast<size_t>(tree.size()) + 1, 0.0);
  for (int32_t n = 0; n < tree.size(); ++n)
    path[static_cast<size_t>(n + 1)] = path[static_cast<size_t>(tree.node(n).parent + 1)] +
                                       channel.log_prob(tree.node(n).parent + 1, tree.node(n).token);
  std::vector<RolloutCandidate> all;
  for (int32_t u = TokenTree::kRoot; u < tree.size(); ++u) {
    int taken = 0;
    for (const TokenProb& t : channel.top(u + 1)) {
      if (taken >= kappa) break;
      if (tree.find_child(u, t.id) >= 0) continue;
      all.push_back({u, t.id, path[static_cast<size_t>(u + 1)] + t.p});
      ++taken;
    }
  }
  const size_t k = std::min(all.size(), static_cast<size_t>(kappa));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const RolloutCandidate& a, const RolloutCandidate& b) { return a.log_score > b.log_score; });
  all.resize(k);
  return all;
}

void run_rollouts(Drafter& drafter, const std::atomic<bool>& stop, RolloutJob* job) {
  Stopwatch timer;
  std::vector<int32_t> frontier = job->candidates;
  // Leaf anchors (paths predicted accepted to the end) have no draft cells yet: they are
  // drafted in the first pass, ahead of their children.
  std::vector<int32_t> leaf_anchors;
  for (int32_t c : job->candidates) {
    const int32_t a = job->tree.node(c).parent;
    if (a != TokenTree::kRoot && !drafter.drafted(a) &&
        std::find(leaf_anchors.begin(), leaf_anchors.end(), a) == leaf_anchors.end())
      leaf_anchors.push_back(a);
  }
  std::sort(leaf_anchors.begin(), leaf_anchors.end());  // parents first
  std::vector<NodeDistribution> out;
  for (int depth = 0; depth < job->gamma && !frontier.empty(); ++depth) {
    if (stop.load(std::memory_order_acquire)) break;
    if (job->steps > 0 && job->time_box > 0 && timer.elapsed() + job->step_estimate > job->time_box) break;
    std::vector<int32_t> nodes;
    if (job->steps == 0) nodes = leaf_anchors;
    nodes.insert(nodes.end(), frontier.begin(), frontier.end());
    Stopwatch step;
    job->status = drafter.draft(job->tree, nodes, &out);
    if (!job->status.ok() || out.size() < nodes.size()) break;  // an error, or the draft's context is full
    const size_t offset = nodes.size() - frontier.size();
    std::vector<int32_t> next;
    for (size_t i = 0; i < frontier.size(); ++i) {
      const int32_t node = frontier[i];
      NodeDistribution& dist = out[offset + i];
      job->drafted.push_back(node);
      job->dists.push_back(dist);
      if (dist.probs.empty()) continue;
      const int64_t position = job->root_position + job->tree.node(node).depth + 1;
      next.push_back(add_chain_token(&job->tree, node, dist, job->greedy, job->seed, position));
      ++job->tokens;
    }
    if (job->steps == 0) job->first_step_seconds = step.elapsed();
    ++job->steps;
    frontier = std::move(next);
  }
  job->draft_seconds = timer.elapsed();
}

int carry_rollout(Drafter& drafter, const RolloutJob& job, const std::vector<int32_t>& accepted, int32_t bonus,
                  CarriedDrafts* carried, bool* committed) {
  *committed = false;
  const int32_t last = accepted.empty() ? TokenTree::kRoot : accepted.back();
  int32_t hit = -1;
  for (int32_t c : job.candidates)
    if (job.tree.node(c).parent == last && job.tree.node(c).token == bonus) hit = c;
  if (hit < 0) return 0;
  // The candidate and the chain below it are EdgeLLM's "provisional chain" below the
  // anchor: the same carry applies (carry_provisional keeps the drafter's work on them).
  ProvisionalJob view;
  view.tree = job.tree;
  view.anchor = last;
  for (int32_t n = hit; n >= 0;) {
    view.chain.push_back(n);
    const auto& children = job.tree.children(n);
    n = children.empty() ? -1 : children[0];
  }
  view.drafted = job.drafted;
  view.dists = job.dists;
  const int kept = carry_provisional(drafter, view, accepted, bonus, carried, committed);
  return *committed ? kept : 0;
}

void MirrorSpeculation::begin(Drafter& drafter, const TokenTree& tree, const SamplingParams& sampling,
                              int64_t root_position) {
  stop();
  job_ = RolloutJob();
  job_.tree = tree;
  job_.gamma = gamma_;
  job_.greedy = sampling.greedy();
  job_.seed = mirror_draft_seed(sampling);
  job_.root_position = root_position;
  job_.time_box = overlap_estimate_;
  job_.step_estimate = step_estimate_;
  stop_.store(false, std::memory_order_release);
  launched_ = false;
  tap_.layer = exit_layer_;
  tap_.fn = [this, &drafter](const float* hidden, const std::vector<int64_t>& rows, std::vector<int64_t>* keep) {
    (void)keep;  // every row is verified in full
    if (static_cast<int64_t>(rows.size()) != job_.tree.size() + 1)
      return Status::Error("mirror: the token channel expects every row of the verification batch");
    // The channel: top tokens of every verified row; kappa plus the row's children, so
    // that kappa candidates remain after the tokens already drafted are excluded.
    int widest = 0;
    for (int32_t n = TokenTree::kRoot; n < job_.tree.size(); ++n)
      widest = std::max(widest, static_cast<int>(job_.tree.children(n).size()));
    channel_.compute(hidden, static_cast<int64_t>(rows.size()), kappa_ + widest);
    for (const RolloutCandidate& c : choose_candidates(job_.tree, channel_, kappa_))
      job_.candidates.push_back(job_.tree.add(c.token, c.anchor, 0.0f));
    if (job_.candidates.empty()) return Status::Ok();
    launched_ = true;
    launched_at_ = now_seconds();
    worker_.run([this, &drafter] { run_rollouts(drafter, stop_, &job_); });
    return Status::Ok();
  };
}

void MirrorSpeculation::stop() {
  if (!launched_) return;
  stop_.store(true, std::memory_order_release);
  worker_.wait();
  launched_ = false;
}

Status MirrorSpeculation::finish(Drafter& drafter, const PassTiming& pass, const std::vector<int32_t>& accepted,
                                 int32_t bonus, CarriedDrafts* carried, bool* committed, CycleStats* cycle) {
  *committed = false;
  cycle->prefix_seconds = pass.before_tap_seconds;
  cycle->channel_seconds = pass.tap_seconds;
  if (!launched_) {
    cycle->suffix_seconds = pass.after_tap_seconds;
    return Status::Ok();
  }
  // The overlap: from the launch to now (the later layers and the acceptance walk).
  const double overlap = now_seconds() - launched_at_;
  stop();
  SF_RETURN_IF_ERROR(job_.status.with_context("mirror rollouts"));
  cycle->suffix_seconds = overlap;
  cycle->rollout_seconds = job_.draft_seconds;
  cycle->rollout_tokens = job_.tokens;
  // Exponential averages for the next cycles' time box.
  constexpr double kWeight = 0.3;
  overlap_estimate_ = overlap_estimate_ > 0 ? (1 - kWeight) * overlap_estimate_ + kWeight * overlap : overlap;
  if (job_.steps > 1) {
    const double later = (job_.draft_seconds - job_.first_step_seconds) / (job_.steps - 1);
    step_estimate_ = step_estimate_ > 0 ? (1 - kWeight) * step_estimate_ + kWeight * later : later;
  } else if (step_estimate_ <= 0 && job_.steps == 1) {
    step_estimate_ = job_.first_step_seconds;
  }
  cycle->rollout_kept = carry_rollout(drafter, job_, accepted, bonus, carried, committed);
  cycle->mirror_outcome = *committed ? 1 : 2;
  return Status::Ok();
}

void add_mirror_stats(const CycleStats& c, SpecStats* s) {
  s->prefix_seconds += c.prefix_seconds;
  s->channel_seconds += c.channel_seconds;
  s->suffix_seconds += c.suffix_seconds;
  s->rollout_seconds += c.rollout_seconds;
  s->model_seconds +=
      c.draft_seconds + c.prefix_seconds + c.channel_seconds + std::max(c.suffix_seconds, c.rollout_seconds);
  s->rollout_tokens += static_cast<uint64_t>(c.rollout_tokens);
  s->rollout_kept += static_cast<uint64_t>(c.rollout_kept);
  if (c.mirror_outcome == 0) return;
  ++s->mirror_cycles;
  if (c.mirror_outcome == 1) ++s->mirror_reused;
  if (c.mirror_outcome == 2) ++s->mirror_fallbacks;
}

}  // namespace sf
