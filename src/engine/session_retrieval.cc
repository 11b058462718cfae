// Session's retrieval drafting (coordgen, pld, sam): creating the drafters, and the prefill
// that keeps the target's top-k predictions per prompt position for calibration.
#include <algorithm>
#include <cmath>

#include "engine/session.h"
#include "ops/top_k.h"
#include "spec/hybrid_drafter.h"
#include "spec/retrieval_drafter.h"

namespace sf {
namespace {

// Bytes a suffix automaton holds per text token at most (two states with their transition
// vectors, and the text), for the budget's up-front count.
constexpr uint64_t kAutomatonBytesPerToken = 160;

RetrievalOptions retrieval_options(const SpecConfig& spec) {
  RetrievalOptions o;
  o.mode = spec.method == SpecConfig::Method::kPld   ? RetrievalOptions::Mode::kPld
           : spec.method == SpecConfig::Method::kSam ? RetrievalOptions::Mode::kSam
                                                     : RetrievalOptions::Mode::kCoordGen;
  // auto's retrieval arm (alone, or beside the draft model's arms) does without the
  // calibration's paths: their prefill computes the LM head on every prompt row (time to
  // first token, and a chunk's logits in memory: 128k vocabularies) for a source auto's
  // gain/cost trees did not draw on measurably. On the synthetic 3B at 0% (2026-12-07 night,
  // two alternations of a warm-up and 3 repetitions) auto with it accepted 1.29 tokens a
  // pass, as without it, against CoordGen's own 1.48. CoordGen's own method keeps it.
  o.calibrate = spec.retrieval.calibrate && spec.method != SpecConfig::Method::kAuto;
  // Reusing rejected tails asks the target for an LM-head row per rejected node; beside a
  // draft model (a HybridDrafter) only after the cycles retrieval drafted in, so auto's model
  // arms do not pay for it. It is most of what CoordGen's trees accept on the synthetic 3B
  // at 0% (1.43 tokens per pass with it, 1.22 without).
  o.reuse = spec.retrieval.reuse;
  o.max_chain = std::min(spec.node_budget, spec.max_tree_depth);
  return o;
}

}  // namespace

Status Session::add_retrieval_drafters(int n_ctx, uint64_t* drafter_bytes) {
  const SpecConfig& spec = options_.spec;
  const RetrievalOptions ro = retrieval_options(spec);
  if (ro.mode != RetrievalOptions::Mode::kCoordGen && !spec.draft_model_path.empty())
    return Status::Errorf("--spec %s is a retrieval-only baseline; drop --draft (or use --spec coordgen for a hybrid)",
                          SpecConfig::method_name(spec.method));
  if (!spec.retrieval.history_dir.empty()) {
    HistoryOptions ho;
    ho.dir = spec.retrieval.history_dir;
    ho.task = spec.retrieval.history_task;
    ho.max_tokens = spec.retrieval.history_max_tokens;
    SF_ASSIGN_OR_RETURN(HistoryStore store,
                        HistoryStore::open(ho, vocabulary_fingerprint(*tokenizer_), model_->hparams().n_vocab));
    if (spec.retrieval.history_clear) SF_RETURN_IF_ERROR(store.clear());
    history_ = std::make_shared<HistoryStore>(std::move(store));
  }
  // Live source: the context; calibration: up to top_k paths per prompt position; reuse:
  // a few short segments; history: its bound. Calibration also holds one prefill chunk's
  // logits while it runs.
  const CalibrationOptions& co = ro.calibration;
  uint64_t tokens = static_cast<uint64_t>(n_ctx);
  if (ro.mode == RetrievalOptions::Mode::kCoordGen && ro.calibrate)
    tokens += static_cast<uint64_t>(n_ctx) * co.top_k * (co.anchor + co.depth + 1);
  if (history_) tokens += spec.retrieval.history_max_tokens;
  uint64_t per_slot = tokens * kAutomatonBytesPerToken;
  if (ro.mode == RetrievalOptions::Mode::kCoordGen && ro.calibrate)
    per_slot += static_cast<uint64_t>(options_.max_batch) * model_->hparams().n_vocab * sizeof(float);
  *drafter_bytes += per_slot * slots_.size();
  for (Slot& slot : slots_) {
    auto retrieval = std::make_unique<RetrievalDrafter>(ro, history_);
    if (slot.drafter) {
      auto hybrid = std::make_unique<HybridDrafter>(std::move(slot.drafter), std::move(retrieval));
      // auto picks a source per cycle (its arms); any other method an auto session runs on
      // a call drafts with the draft model, as it would without the retrieval drafter.
      if (spec.method == SpecConfig::Method::kAuto) hybrid->set_sources(true, false);
      slot.drafter = std::move(hybrid);
    } else {
      slot.drafter = std::move(retrieval);
    }
    if (!slot.builder) slot.builder = make_tree_builder(spec);
  }
  return Status::Ok();
}

Status Session::evaluate_top_k(ModelRunner& target, const std::vector<int32_t>& tokens, int k,
                               std::vector<std::vector<TokenProb>>* rows, std::vector<float>* last_logits) {
  const int n_vocab = model_->hparams().n_vocab;
  rows->clear();
  if (tokens.empty()) return Status::Ok();
  if (target.n_past() + static_cast<int64_t>(tokens.size()) > target.n_ctx())
    return Status::Errorf("sequence of %lld tokens does not fit the context of %d tokens (use --ctx-size)",
                          static_cast<long long>(target.n_past() + static_cast<int64_t>(tokens.size())),
                          target.n_ctx());
  std::vector<float> logits;
  std::vector<int32_t> ids;
  const int64_t n = static_cast<int64_t>(tokens.size());
  for (int64_t begin = 0; begin < n; begin += options_.max_batch) {
    if (options_.cancel != nullptr && options_.cancel->load()) return Status::Error(SessionOptions::kCancelledMessage);
    const int64_t end = std::min<int64_t>(n, begin + options_.max_batch);
    SF_RETURN_IF_ERROR(target.forward_causal(std::vector<int32_t>(tokens.begin() + begin, tokens.begin() + end)));
    logits.resize(static_cast<size_t>(end - begin) * n_vocab);
    SF_RETURN_IF_ERROR(target.logits_all(logits.data()));
    for (int64_t r = 0; r < end - begin; ++r) {
      const float* l = logits.data() + r * n_vocab;
      const float max = *std::max_element(l, l + n_vocab);
      double sum = 0;
      for (int i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(l[i] - max));
      const int kk = std::min(k, n_vocab);
      top_k_indices(l, n_vocab, kk, &ids);
      std::vector<TokenProb> top;
      for (int i = 0; i < kk; ++i)
        top.push_back({ids[i], static_cast<float>(std::exp(static_cast<double>(l[ids[i]] - max)) / sum)});
      rows->push_back(std::move(top));
    }
    if (last_logits && end == n) last_logits->assign(logits.end() - n_vocab, logits.end());
  }
  return Status::Ok();
}

}  // namespace sf
