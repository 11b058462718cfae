#include "spec/retrieval_drafter.h"

#include <algorithm>

#include "base/timer.h"
#include "spec/prompt_lookup.h"

namespace sf {
namespace {
// A reused segment's start, offered where no source matches: a guess worth this much.
constexpr float kReuseStartProb = 0.3f;
// What a rejected row is worth before the session has measured it (tokens per row): CoordGen's
// trees on the synthetic 3B at 0% accepted ~0.2 tokens a cycle more with reuse than without
// (1.43 against 1.22) from up to 8 rows asked a cycle. Held as this many rows of evidence.
constexpr double kReusePriorTokensPerRow = 0.025;
constexpr double kReusePriorRows = 32;
// The measured value's memory: ~100 cycles.
constexpr double kReuseDecay = 0.99;
// Sources other than the live one are re-matched over this many trailing tokens after they
// change (longer matches than their documents cannot exist; 64 bounds the history's).
constexpr size_t kResyncWindow = 64;
}  // namespace

RetrievalDrafter::RetrievalDrafter(const RetrievalOptions& options, std::shared_ptr<HistoryStore> history)
    : options_(options), history_store_(std::move(history)), reuse_(options.reuse_options) {
  const bool coordgen = options_.mode == RetrievalOptions::Mode::kCoordGen;
  sources_[kLive].active = true;
  sources_[kCalibration].active = coordgen && options_.calibrate;
  sources_[kReuse].active = coordgen && options_.reuse;
  sources_[kHistory].active = coordgen && history_store_ != nullptr;
  if (sources_[kHistory].active) {
    for (const auto& doc : history_store_->documents()) sources_[kHistory].automaton.add_document(doc);
    sources_[kHistory].automaton.refresh_counts();
  }
}

const char* RetrievalDrafter::name() const {
  switch (options_.mode) {
    case RetrievalOptions::Mode::kSam:
      return "sam";
    case RetrievalOptions::Mode::kPld:
      return "pld";
    default:
      return "coordgen";
  }
}

uint64_t RetrievalDrafter::resident_bytes() const {
  uint64_t bytes = sequence_.capacity() * sizeof(int32_t);
  for (const Source& s : sources_) bytes += s.automaton.memory_bytes();
  return bytes;
}

void RetrievalDrafter::reset(const std::vector<int32_t>& prompt) {
  sequence_.clear();
  sources_[kLive].automaton.clear();
  sources_[kCalibration].automaton.clear();
  reuse_.clear();
  sources_[kReuse].automaton.clear();
  for (Source& s : sources_) s.root = {};
  for (int32_t t : prompt) push_committed(t);
}

void RetrievalDrafter::push_committed(int32_t token) {
  sequence_.push_back(token);
  sources_[kLive].automaton.extend(token);
  for (int s = kCalibration; s < kSources; ++s)
    if (sources_[s].active) sources_[s].root = sources_[s].automaton.step(sources_[s].root, token);
}

Status RetrievalDrafter::begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                                     const Sampler& draft_sampler) {
  (void)sampling;
  (void)draft_sampler;
  Stopwatch timer;
  // commit() tracks the sequence. A drafter left out of some cycles (a HybridDrafter's
  // retrieval source while auto runs other arms) catches up on the tokens it missed;
  // anything else is a new sequence.
  if (history.size() >= sequence_.size() && std::equal(sequence_.begin(), sequence_.end(), history.begin())) {
    for (size_t i = sequence_.size(); i < history.size(); ++i) push_committed(history[i]);
  } else {
    reset(history);
  }
  node_match_.assign(1, NodeMatch{});
  reuse_only_.assign(1, {});
  reuse_rows_this_cycle_ = 0;
  chain_.clear();
  switch (options_.mode) {
    case RetrievalOptions::Mode::kPld:
      chain_ = prompt_lookup(sequence_, options_.pld_max_ngram, options_.max_chain);
      break;
    case RetrievalOptions::Mode::kSam: {
      SuffixAutomaton& live = sources_[kLive].automaton;
      const SuffixAutomaton::Match m = live.continuation(live.whole_text());
      if (m.length > 0) {
        const size_t from = static_cast<size_t>(live.first_end(m)) + 1;
        const size_t to = std::min(sequence_.size(), from + static_cast<size_t>(options_.max_chain));
        chain_.assign(sequence_.begin() + static_cast<std::ptrdiff_t>(from),
                      sequence_.begin() + static_cast<std::ptrdiff_t>(to));
      }
      break;
    }
    case RetrievalOptions::Mode::kCoordGen: {
      NodeMatch& root = node_match_[0];
      root.m[kLive] = sources_[kLive].automaton.continuation(sources_[kLive].automaton.whole_text());
      for (int s = kCalibration; s < kSources; ++s)
        if (sources_[s].active) root.m[s] = sources_[s].automaton.continuation(sources_[s].root);
      break;
    }
  }
  counters_.seconds += timer.elapsed();
  return Status::Ok();
}

NodeDistribution RetrievalDrafter::coordgen_distribution(const NodeMatch& nm, std::vector<int32_t>* reuse_only) {
  struct Scored {
    int32_t token;
    float score;
    bool other_source;  // offered by a source besides reuse
  };
  std::vector<Scored> score;
  double weight_sum = 0;
  int32_t longest = 0;
  for (int s = 0; s < kSources; ++s) {
    const SuffixAutomaton::Match& m = nm.m[s];
    if (!sources_[s].active || m.length < 1) continue;
    sources_[s].automaton.next_tokens(m, &scratch_);
    double total = 0;
    for (const auto& tc : scratch_) total += tc.second;
    if (total <= 0) continue;
    const double w = m.length;
    weight_sum += w;
    longest = std::max(longest, m.length);
    for (const auto& [token_ref, count] : scratch_) {
      // A copy: clang before 16 cannot capture a structured binding in a lambda (the
      // sanitizer builds use clang).
      const auto token = token_ref;
      auto it = std::find_if(score.begin(), score.end(), [&](const Scored& e) { return e.token == token; });
      const float add = static_cast<float>(w * count / total);
      if (it == score.end()) {
        score.push_back({token, add, s != kReuse});
      } else {
        it->score += add;
        it->other_source = it->other_source || s != kReuse;
      }
    }
  }
  NodeDistribution d;
  if (weight_sum > 0) {
    const double scale = static_cast<double>(longest) / (longest + 1) / weight_sum;
    for (const Scored& e : score) d.probs.push_back({e.token, static_cast<float>(e.score * scale)});
  }
  std::sort(d.probs.begin(), d.probs.end(),
            [](const TokenProb& a, const TokenProb& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); });
  if (static_cast<int>(d.probs.size()) > options_.max_candidates) d.probs.resize(options_.max_candidates);
  reuse_only->clear();
  for (const Scored& e : score)
    if (!e.other_source) reuse_only->push_back(e.token);
  return d;
}

NodeDistribution RetrievalDrafter::chain_distribution(const TokenTree& tree, int32_t node) const {
  NodeDistribution d;
  size_t depth = 0;
  if (node != TokenTree::kRoot) {
    const std::vector<int32_t> path = tree.path_to(node);
    if (path.size() > chain_.size()) return d;
    for (size_t i = 0; i < path.size(); ++i)
      if (tree.node(path[i]).token != chain_[i]) return d;
    depth = path.size();
  }
  if (depth < chain_.size()) d.probs.push_back({chain_[depth], 1.0f});
  return d;
}

Status RetrievalDrafter::draft(const TokenTree& tree, const std::vector<int32_t>& nodes,
                               std::vector<NodeDistribution>* out) {
  out->clear();
  Stopwatch timer;
  const bool coordgen = options_.mode == RetrievalOptions::Mode::kCoordGen;
  if (coordgen && node_match_.size() < static_cast<size_t>(tree.size()) + 1) {
    node_match_.resize(static_cast<size_t>(tree.size()) + 1, NodeMatch{{{-1, -1}}});
    reuse_only_.resize(node_match_.size());
  }
  // A node's matches from its parent's: one step and a walk to a suffix with a continuation.
  std::function<const NodeMatch&(int32_t)> match_of = [&](int32_t node) -> const NodeMatch& {
    NodeMatch& nm = node_match_[static_cast<size_t>(node) + 1];
    if (node == TokenTree::kRoot || nm.m[kLive].state >= 0) return nm;
    const NodeMatch parent = match_of(tree.node(node).parent);
    const int32_t token = tree.node(node).token;
    for (int s = 0; s < kSources; ++s) {
      if (!sources_[s].active) {
        nm.m[s] = {};
        continue;
      }
      SuffixAutomaton& a = sources_[s].automaton;
      nm.m[s] = a.continuation(a.step(parent.m[s], token));
    }
    return nm;
  };
  for (int32_t node : nodes) {
    if (!coordgen) {
      out->push_back(chain_distribution(tree, node));
      continue;
    }
    std::vector<int32_t>& reuse_only = reuse_only_[static_cast<size_t>(node) + 1];
    NodeDistribution d = coordgen_distribution(match_of(node), &reuse_only);
    // Reused segments start where nothing else matches, and always below the root.
    if (sources_[kReuse].active && (node == TokenTree::kRoot || d.probs.empty())) {
      for (const auto& seg : reuse_.segments()) {
        auto it =
            std::find_if(d.probs.begin(), d.probs.end(), [&](const TokenProb& tp) { return tp.id == seg.tokens[0]; });
        if (it == d.probs.end()) {
          d.probs.push_back({seg.tokens[0], kReuseStartProb});
          reuse_only.push_back(seg.tokens[0]);
        } else {
          it->p = std::max(it->p, kReuseStartProb);
        }
      }
      std::sort(d.probs.begin(), d.probs.end(),
                [](const TokenProb& a, const TokenProb& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); });
    }
    out->push_back(std::move(d));
  }
  ++counters_.passes;
  counters_.rows += nodes.size();
  counters_.seconds += timer.elapsed();
  return Status::Ok();
}

void RetrievalDrafter::commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) {
  for (int32_t node : accepted) push_committed(tree.node(node).token);
  push_committed(bonus);
  if (!sources_[kReuse].active) return;
  // What reuse bought this cycle: accepted tokens no other source offered.
  int reused = 0;
  for (int32_t node : accepted) {
    const size_t parent = static_cast<size_t>(tree.node(node).parent + 1);
    if (parent < reuse_only_.size()) {
      const std::vector<int32_t>& only = reuse_only_[parent];
      reused += std::find(only.begin(), only.end(), tree.node(node).token) != only.end();
    }
  }
  reuse_tokens_ = kReuseDecay * reuse_tokens_ + reused;
  reuse_rows_ = kReuseDecay * reuse_rows_ + static_cast<double>(reuse_rows_this_cycle_);
  reuse_rows_this_cycle_ = 0;
  bool changed = reuse_.age(tree.size());
  changed = reuse_.keep(std::move(pending_segment_)) || changed;
  pending_segment_.clear();
  if (changed) rebuild_reuse_source();
}

void RetrievalDrafter::resync(int source) {
  Source& s = sources_[source];
  s.root = {};
  const size_t from = sequence_.size() > kResyncWindow ? sequence_.size() - kResyncWindow : 0;
  for (size_t i = from; i < sequence_.size(); ++i) s.root = s.automaton.step(s.root, sequence_[i]);
}

void RetrievalDrafter::rebuild_reuse_source() {
  SuffixAutomaton& a = sources_[kReuse].automaton;
  a.clear();
  for (const auto& seg : reuse_.segments()) a.add_document(seg.tokens);
  resync(kReuse);
}

int RetrievalDrafter::prefill_top_k() const {
  return sources_[kCalibration].active ? std::max(1, options_.calibration.top_k) : 0;
}

void RetrievalDrafter::observe_prefill(const std::vector<int32_t>& prompt, size_t first,
                                       const std::vector<std::vector<TokenProb>>& rows) {
  if (!sources_[kCalibration].active) return;
  Stopwatch timer;
  SuffixAutomaton& a = sources_[kCalibration].automaton;
  for (const auto& path : calibrated_paths(prompt, first, rows, options_.calibration)) {
    a.add_document(path);
    ++calibrated_paths_;
  }
  a.refresh_counts();
  resync(kCalibration);
  counters_.seconds += timer.elapsed();
}

bool RetrievalDrafter::wants_rejected_predictions() const { return sources_[kReuse].active; }

void RetrievalDrafter::observe_rejected(const TokenTree& tree, const std::vector<int32_t>& accepted,
                                        const std::function<int32_t(int32_t node)>& target_argmax) {
  if (!sources_[kReuse].active) return;
  pending_segment_ = reuse_.select(tree, accepted, [&](int32_t node) {
    ++reuse_rows_this_cycle_;
    return target_argmax(node);
  });
}

double RetrievalDrafter::reuse_tokens_per_rejected_row() const {
  if (!sources_[kReuse].active) return 0;
  return (reuse_tokens_ + kReusePriorTokensPerRow * kReusePriorRows) / (reuse_rows_ + kReusePriorRows);
}

Status RetrievalDrafter::end_sequence(const std::vector<int32_t>& sequence, size_t prompt_tokens) {
  if (!history_store_ || prompt_tokens >= sequence.size()) return Status::Ok();
  std::vector<int32_t> output(sequence.begin() + static_cast<std::ptrdiff_t>(prompt_tokens), sequence.end());
  if (sources_[kHistory].active) {
    sources_[kHistory].automaton.add_document(output);
    sources_[kHistory].automaton.refresh_counts();
  }
  history_store_->add(std::move(output));
  return history_store_->save();
}

}  // namespace sf
