// TreePolicy: decides the shape of each draft tree. The drafter asks it, node by node and
// level by level, how many children to draft below a node; the policy may look at what
// the tree holds so far (tokens, depths, draft probabilities) and at the results of past
// cycles. Chain and static trees are fixed shapes; the papers' policies (LEVER gain/cost
// trees, EdgeLLM confidence-paced trees, ...) plug in here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "spec/spec_config.h"
#include "spec/token_tree.h"

namespace sf {

struct CycleFeedback {
  int32_t proposed = 0;  // nodes in the tree
  int32_t accepted = 0;  // nodes on the accepted path
  double draft_seconds = 0;
  double verify_seconds = 0;
};

class TreePolicy {
 public:
  virtual ~TreePolicy() = default;
  virtual const char* name() const = 0;
  // Called before drafting; max_nodes is what the context (and any other limit) allows.
  virtual void begin_cycle(int64_t max_nodes) = 0;
  // Children to draft below `parent` (TokenTree::kRoot for the root); 0 makes it a leaf.
  virtual int children(const TokenTree& tree, int32_t parent) = 0;
  virtual void observe(const CycleFeedback& feedback) { (void)feedback; }
};

// Fixed widths per depth: {1} x gamma is Chain-SD; {3, 2, 1} a static tree. Trees are
// trimmed so they never exceed the cycle's max_nodes.
class StaticTreePolicy : public TreePolicy {
 public:
  StaticTreePolicy(std::vector<int> widths, const char* name) : widths_(std::move(widths)), name_(name) {}
  const char* name() const override { return name_; }
  void begin_cycle(int64_t max_nodes) override { remaining_ = max_nodes; }
  int children(const TokenTree& tree, int32_t parent) override;

 private:
  std::vector<int> widths_;
  const char* name_;
  int64_t remaining_ = 0;
};

// The policy a SpecConfig names.
std::unique_ptr<TreePolicy> make_tree_policy(const SpecConfig& config);

}  // namespace sf
