// Static tree policies give the configured shape and never exceed the cycle's node limit;
// the tree batch gives every node its ancestors and nothing else.
#include "spec/tree_policy.h"

#include <gtest/gtest.h>

#include "spec/tree_batch.h"

namespace sf {
namespace {

// Expands a tree the way a drafter does, level by level, with dummy tokens.
TokenTree build(TreePolicy& policy, int64_t max_nodes) {
  TokenTree tree;
  policy.begin_cycle(max_nodes);
  std::vector<int32_t> frontier = {TokenTree::kRoot};
  int32_t token = 0;
  while (!frontier.empty()) {
    std::vector<int32_t> next;
    for (int32_t parent : frontier) {
      const int n = policy.children(tree, parent);
      for (int i = 0; i < n; ++i) next.push_back(tree.add(token++, parent, 0.5f));
    }
    frontier = next;
  }
  return tree;
}

TEST(StaticTreePolicy, ChainAndTreeShapes) {
  SpecConfig chain;
  chain.method = SpecConfig::Method::kChain;
  chain.draft_len = 5;
  auto p = make_tree_policy(chain);
  TokenTree t = build(*p, 1000);
  EXPECT_EQ(t.size(), 5);
  EXPECT_EQ(t.max_depth(), 5);

  SpecConfig tree;
  tree.method = SpecConfig::Method::kTree;
  tree.tree_widths = {3, 2, 1};
  auto q = make_tree_policy(tree);
  t = build(*q, 1000);
  EXPECT_EQ(t.size(), 3 + 6 + 6);
  EXPECT_EQ(t.children(TokenTree::kRoot).size(), 3u);
  EXPECT_EQ(tree_node_count(tree.tree_widths), 15);
}

TEST(StaticTreePolicy, RespectsNodeLimit) {
  SpecConfig tree;
  tree.method = SpecConfig::Method::kTree;
  tree.tree_widths = {4, 4};
  auto p = make_tree_policy(tree);
  EXPECT_EQ(build(*p, 7).size(), 7);
  EXPECT_EQ(build(*p, 0).size(), 0);
}

TEST(TreeBatch, AncestorOnlyMaskAndDepthPositions) {
  TokenTree tree;
  const int32_t a = tree.add(10, TokenTree::kRoot, 0.5f);
  const int32_t b = tree.add(11, TokenTree::kRoot, 0.5f);
  const int32_t c = tree.add(12, a, 0.5f);
  const ForwardBatch batch = make_tree_batch(tree, 7, 4);
  ASSERT_EQ(batch.size(), 4);
  EXPECT_EQ(batch.tokens, (std::vector<int32_t>{7, 10, 11, 12}));
  EXPECT_EQ(batch.positions, (std::vector<int32_t>{4, 5, 5, 6}));
  EXPECT_EQ(batch.kv_cells, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(batch.n_kv, 8);
  for (int64_t row = 0; row < 4; ++row)
    for (int32_t cell = 0; cell <= 4; ++cell) EXPECT_TRUE(batch.can_attend(row, cell));  // prefix + root
  EXPECT_TRUE(batch.can_attend(tree_row(c), 5));                                         // c sees its parent a
  EXPECT_FALSE(batch.can_attend(tree_row(c), 6));                                        // but not its uncle b
  EXPECT_TRUE(batch.can_attend(tree_row(c), 7));                                         // and itself
  EXPECT_FALSE(batch.can_attend(tree_row(b), 5));  // siblings do not see each other
  EXPECT_FALSE(batch.can_attend(tree_row(a), 7));  // nor descendants
}

}  // namespace
}  // namespace sf
