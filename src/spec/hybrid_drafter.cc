#include "spec/hybrid_drafter.h"

#include <algorithm>
#include <unordered_map>

#include "base/check.h"

namespace sf {

NodeDistribution merge_max(const NodeDistribution& a, const NodeDistribution& b) {
  std::unordered_map<int32_t, float> best;
  for (const auto* d : {&a, &b})
    for (const TokenProb& tp : d->probs) {
      auto [it, inserted] = best.emplace(tp.id, tp.p);
      if (!inserted) it->second = std::max(it->second, tp.p);
    }
  NodeDistribution out;
  out.probs.reserve(best.size());
  for (const auto& [id, p] : best) out.probs.push_back({id, p});
  std::sort(out.probs.begin(), out.probs.end(),
            [](const TokenProb& x, const TokenProb& y) { return x.p > y.p || (x.p == y.p && x.id < y.id); });
  return out;
}

HybridDrafter::HybridDrafter(std::unique_ptr<Drafter> model, std::unique_ptr<Drafter> retrieval)
    : model_(std::move(model)), retrieval_(std::move(retrieval)) {}

void HybridDrafter::set_sources(bool model, bool retrieval) {
  SF_CHECK(model || retrieval, "a hybrid drafter drafts from at least one source");
  use_model_ = model;
  use_retrieval_ = retrieval;
}

uint64_t HybridDrafter::resident_bytes() const { return model_->resident_bytes() + retrieval_->resident_bytes(); }

void HybridDrafter::reset(const std::vector<int32_t>& prompt) {
  model_->reset(prompt);
  retrieval_began_ = false;
  retrieval_reset_pending_ = !use_retrieval_;
  if (use_retrieval_) retrieval_->reset(prompt);
}

void HybridDrafter::observe_prefill(const std::vector<int32_t>& prompt, size_t first,
                                    const std::vector<std::vector<TokenProb>>& rows) {
  // The prefill's predictions belong to this prompt: a deferred reset happens first.
  reset_retrieval_if_pending(prompt);
  retrieval_->observe_prefill(prompt, first, rows);
}

void HybridDrafter::reset_retrieval_if_pending(const std::vector<int32_t>& sequence) {
  if (!retrieval_reset_pending_) return;
  retrieval_->reset(sequence);
  retrieval_reset_pending_ = false;
}

Status HybridDrafter::begin_cycle(const std::vector<int32_t>& history, const SamplingParams& sampling,
                                  const Sampler& draft_sampler) {
  model_full_ = false;
  SF_RETURN_IF_ERROR(model_->begin_cycle(history, sampling, draft_sampler));
  cycle_ = {&history, &sampling, &draft_sampler};
  retrieval_began_ = false;
  return use_retrieval_ ? begin_retrieval_cycle() : Status::Ok();
}

Status HybridDrafter::begin_retrieval_cycle() {
  SF_CHECK(cycle_.history, "draft() outside a cycle");
  reset_retrieval_if_pending(*cycle_.history);
  // It catches up on the commits it was not told of (RetrievalDrafter::begin_cycle).
  SF_RETURN_IF_ERROR(retrieval_->begin_cycle(*cycle_.history, *cycle_.sampling, *cycle_.draft_sampler));
  retrieval_began_ = true;
  return Status::Ok();
}

Status HybridDrafter::draft(const TokenTree& tree, const std::vector<int32_t>& nodes,
                            std::vector<NodeDistribution>* out) {
  std::vector<NodeDistribution> from_model, from_retrieval;
  if (use_model_ && !model_full_) {
    SF_RETURN_IF_ERROR(model_->draft(tree, nodes, &from_model));
    if (from_model.size() < nodes.size()) model_full_ = true;
  }
  if (use_retrieval_) {
    if (!retrieval_began_) SF_RETURN_IF_ERROR(begin_retrieval_cycle());
    SF_RETURN_IF_ERROR(retrieval_->draft(tree, nodes, &from_retrieval));
  }
  out->clear();
  if (!use_retrieval_) {
    *out = std::move(from_model);  // the model's rows as they are (fewer when it is full)
  } else if (!use_model_) {
    *out = std::move(from_retrieval);
  } else {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeDistribution empty;
      out->push_back(merge_max(i < from_model.size() ? from_model[i] : empty,
                               i < from_retrieval.size() ? from_retrieval[i] : empty));
    }
  }
  const DraftCounters& m = model_->draft_counters();
  const DraftCounters& r = retrieval_->draft_counters();
  counters_.passes = m.passes;
  counters_.rows = m.rows;
  counters_.seconds = m.seconds + r.seconds;
  counters_.catch_up_tokens = m.catch_up_tokens;
  counters_.catch_up_seconds = m.catch_up_seconds;
  return Status::Ok();
}

void HybridDrafter::observe_rejected(const TokenTree& tree, const std::vector<int32_t>& accepted,
                                     const std::function<int32_t(int32_t node)>& target_argmax) {
  if (retrieval_began_) retrieval_->observe_rejected(tree, accepted, target_argmax);
}

void HybridDrafter::commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) {
  model_->commit(tree, accepted, bonus);
  if (retrieval_began_) retrieval_->commit(tree, accepted, bonus);
  retrieval_began_ = false;
  cycle_ = {};
}

bool HybridDrafter::commit_carry(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus_node,
                                 const TokenTree& next, const std::vector<int32_t>& old_of_new) {
  if (retrieval_began_ || !model_->commit_carry(tree, accepted, bonus_node, next, old_of_new)) return false;
  cycle_ = {};
  return true;
}

}  // namespace sf
