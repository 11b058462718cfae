#include "spec/spec_config.h"

namespace sf {
const char* SpecConfig::method_name(Method m) {
  switch (m) {
    case Method::kNone:
      return "none";
    case Method::kChain:
      return "chain";
    case Method::kTree:
      return "tree";
  }
  return "?";
}

namespace {
// Limits that keep a verification batch a sensible size (rows and attention mask).
constexpr int kMaxDraftLen = 64;
constexpr int kMaxWidth = 32;
constexpr int64_t kMaxTreeNodes = 1024;
}  // namespace

std::vector<int> tree_widths(const SpecConfig& config) {
  if (config.method == SpecConfig::Method::kChain) return std::vector<int>(config.draft_len, 1);
  if (!config.tree_widths.empty()) return config.tree_widths;
  std::vector<int> w(config.draft_len, 2);
  if (!w.empty()) w.back() = 1;
  return w;
}

int64_t tree_node_count(const std::vector<int>& widths) {
  int64_t level = 1, total = 0;
  for (int w : widths) {
    level *= w;
    total += level;
    if (total > (int64_t{1} << 40)) break;
  }
  return total;
}

Status validate_spec_config(const SpecConfig& c) {
  if (c.draft_len < 1 || c.draft_len > kMaxDraftLen)
    return Status::Errorf("--draft-len %d is out of range (1..%d)", c.draft_len, kMaxDraftLen);
  for (int w : c.tree_widths)
    if (w < 1 || w > kMaxWidth) return Status::Errorf("--tree-widths: width %d is out of range (1..%d)", w, kMaxWidth);
  if (c.tree_widths.size() > static_cast<size_t>(kMaxDraftLen))
    return Status::Errorf("--tree-widths: depth %zu is over %d", c.tree_widths.size(), kMaxDraftLen);
  const int64_t nodes = tree_node_count(tree_widths(c));
  if (nodes > kMaxTreeNodes)
    return Status::Errorf("the draft tree would have %lld nodes (limit %lld); use fewer or narrower levels",
                          static_cast<long long>(nodes), static_cast<long long>(kMaxTreeNodes));
  return Status::Ok();
}

}  // namespace sf
