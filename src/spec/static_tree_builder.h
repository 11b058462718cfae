// StaticTreeBuilder: fixed widths per depth, drafted level by level (one draft pass per
// depth over that depth's nodes). {1} x gamma is Chain-SD; {3, 2, 1} a SpecInfer-style
// static tree. Greedy decoding takes each node's top-w draft tokens; sampling draws w
// i.i.d. samples (verified by recursive rejection). Trees are trimmed so they never exceed
// the cycle's max_nodes (the first nodes of a level get their children first).
#pragma once

#include <vector>

#include "spec/tree_builder.h"

namespace sf {

class StaticTreeBuilder : public TreeBuilder {
 public:
  StaticTreeBuilder(std::vector<int> widths, const char* name) : widths_(std::move(widths)), name_(name) {}
  const char* name() const override { return name_; }
  Status build(Drafter& drafter, const BuildContext& ctx, TokenTree* tree) override;

 private:
  std::vector<int> widths_;
  const char* name_;
};

}  // namespace sf
