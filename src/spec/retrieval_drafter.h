// RetrievalDrafter: drafts retrieved from the context instead of a draft model (CoordGen;
// the SAM-Decoding and prompt-lookup baselines). No weights: it works for every model.
//
// Modes:
//  - kCoordGen: multi-branch drafts. Every node's distribution merges the tokens that
//    follow the longest suffix match of (sequence + path to the node) in several suffix
//    automata (suffix_automaton.h), weighted by occurrence counts:
//      live         the prompt and everything generated so far (extended per token);
//      calibration  paths of the target's own prefill predictions (CoordGen 3.3,
//                   context_calibration.h), when calibrate;
//      reuse        rejected draft tails that the target's predictions agreed with
//                   (CoordGen 3.4, draft_reuse.h), when reuse; what a rejected row is
//                   worth is measured (tokens accepted that only reuse offered, per row
//                   asked for) for gain/cost tree builders;
//      history      a persistent store of earlier outputs of the task (history_store.h).
//    Probabilities: within a source, count / total; sources are mixed with weights equal
//    to their match lengths; the result is scaled by l / (l + 1) for the longest match l,
//    so a one-token match is worth less than a long one. Children are chosen by the tree
//    builder (deterministic), so verification is lossless greedy and sampled.
//  - kSam: one chain from the first occurrence of the longest suffix match in the live
//    automaton (SAM-Decoding without its static store and without calibration).
//  - kPld: one chain by prompt lookup (prompt_lookup.h).
// The chains are one-hot distributions (probability 1) along the chain and nothing
// elsewhere, so any tree builder turns them into a chain.
// Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "spec/context_calibration.h"
#include "spec/draft_reuse.h"
#include "spec/drafter.h"
#include "spec/history_store.h"
#include "spec/suffix_automaton.h"

namespace sf {

struct RetrievalOptions {
  enum class Mode { kCoordGen, kSam, kPld };
  Mode mode = Mode::kCoordGen;
  bool calibrate = true;  // coordgen: calibrated paths from the prefill's logits
  bool reuse = true;      // coordgen: reuse of rejected tails
  int max_chain = 16;     // sam, pld: tokens per draft
  int pld_max_ngram = 3;  // pld: longest n-gram looked up
  int max_candidates = 8;
  CalibrationOptions calibration;
  ReuseOptions reuse_options;
};

class RetrievalDrafter : public Drafter {
 public:
  // history: an opened store (may be null: none). Its documents seed the history source;
  // end_sequence() adds each generation's output and saves it.
  RetrievalDrafter(const RetrievalOptions& options, std::shared_ptr<HistoryStore> history);

  const char* name() const override;
  uint64_t resident_bytes() const override;
  const DraftCounters& draft_counters() const override { return counters_; }

  void reset(const std::vector<int32_t>& prompt) override;
  Status begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                     const Sampler& draft_sampler) override;
  Status draft(const TokenTree& tree, const std::vector<int32_t>& nodes, std::vector<NodeDistribution>* out) override;
  void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) override;

  int prefill_top_k() const override;
  void observe_prefill(const std::vector<int32_t>& prompt, size_t first,
                       const std::vector<std::vector<TokenProb>>& rows) override;
  bool wants_rejected_predictions() const override;
  void observe_rejected(const TokenTree& tree, const std::vector<int32_t>& accepted,
                        const std::function<int32_t(int32_t node)>& target_argmax) override;
  double reuse_tokens_per_rejected_row() const override;
  Status end_sequence(const std::vector<int32_t>& sequence, size_t prompt_tokens) override;

  // What the sources hold (for tests and --stats).
  const SuffixAutomaton& live() const { return sources_[kLive].automaton; }
  const SuffixAutomaton& calibration() const { return sources_[kCalibration].automaton; }
  const DraftReuse& reuse() const { return reuse_; }
  uint64_t calibrated_path_count() const { return calibrated_paths_; }

 private:
  enum SourceId { kLive, kCalibration, kReuse, kHistory, kSources };
  struct Source {
    SuffixAutomaton automaton;
    SuffixAutomaton::Match root;  // match of the committed sequence's suffix
    bool active = false;
  };
  // Matches of one tree node in every source.
  struct NodeMatch {
    SuffixAutomaton::Match m[kSources];
  };
  // reuse_only: the candidates that the reuse source alone offered.
  NodeDistribution coordgen_distribution(const NodeMatch& nm, std::vector<int32_t>* reuse_only);
  NodeDistribution chain_distribution(const TokenTree& tree, int32_t node) const;
  void push_committed(int32_t token);
  // Re-matches a changed source's root over the sequence's last tokens.
  void resync(int source);
  void rebuild_reuse_source();

  RetrievalOptions options_;
  std::shared_ptr<HistoryStore> history_store_;
  Source sources_[kSources];
  std::vector<int32_t> sequence_;  // committed tokens (the live automaton's text)
  DraftReuse reuse_;
  std::vector<int32_t> pending_segment_;  // selected after verification, kept at commit
  uint64_t calibrated_paths_ = 0;
  // This cycle.
  std::vector<NodeMatch> node_match_;  // per tree node (index + 1; 0 is the root)
  std::vector<int32_t> chain_;         // sam, pld: the cycle's chain
  // Per tree node (index + 1): the children's tokens only the reuse source offered.
  std::vector<std::vector<int32_t>> reuse_only_;
  int64_t reuse_rows_this_cycle_ = 0;  // rejected rows asked for
  // Decayed sums over cycles: tokens accepted that only the reuse source offered, rows asked.
  double reuse_tokens_ = 0, reuse_rows_ = 0;
  DraftCounters counters_;
  std::vector<std::pair<int32_t, uint32_t>> scratch_;
};

}  // namespace sf
