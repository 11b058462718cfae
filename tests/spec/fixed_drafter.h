// FixedDrafter: a drafter for unit tests of tree builders and drafter combinations (no
// model): it proposes one token with one probability below every node, and records what
// it is told (the committed sequence, the histories of its cycles, the nodes it drafted).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "spec/drafter.h"

namespace sf::test {

// Proposes `token` with probability `p` at every node, and records what it is told.
class FixedDrafter : public Drafter {
 public:
  FixedDrafter(int32_t token, float p) : token_(token), p_(p) {}
  const char* name() const override { return "fixed"; }
  uint64_t resident_bytes() const override { return 0; }
  void reset(const std::vector<int32_t>& prompt) override { sequence = prompt; }
  Status begin_cycle(const std::vector<int32_t>& history, const SamplingParams&, const Sampler&) override {
    ++cycles;
    last_history = history;
    return Status::Ok();
  }
  Status draft(const TokenTree&, const std::vector<int32_t>& nodes, std::vector<NodeDistribution>* out) override {
    drafted_nodes += static_cast<int>(nodes.size());
    out->clear();
    for (size_t i = 0; i < nodes.size(); ++i) out->push_back(NodeDistribution{{{token_, p_}}});
    return Status::Ok();
  }
  void commit(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus) override {
    for (int32_t node : accepted) sequence.push_back(tree.node(node).token);
    sequence.push_back(bonus);
  }
  const DraftCounters& draft_counters() const override { return counters_; }
  bool wants_rejected_predictions() const override { return wants_rejected; }
  void observe_rejected(const TokenTree&, const std::vector<int32_t>&,
                        const std::function<int32_t(int32_t node)>&) override {
    ++rejected_observations;
  }

  bool wants_rejected = false;
  int rejected_observations = 0;
  std::vector<int32_t> sequence;
  std::vector<int32_t> last_history;  // begin_cycle's
  int cycles = 0;
  int drafted_nodes = 0;

 private:
  int32_t token_;
  float p_;
  DraftCounters counters_;
};

}  // namespace sf::test
