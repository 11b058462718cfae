#include "spec/spec_config.h"

#include <algorithm>

namespace sf {
const char* SpecConfig::method_name(Method m) {
  switch (m) {
    case Method::kNone:
      return "none";
    case Method::kChain:
      return "chain";
    case Method::kTree:
      return "tree";
    case Method::kOptTree:
      return "opt-tree";
    case Method::kLever:
      return "lever";
    case Method::kCats:
      return "cats";
    case Method::kKangaroo:
      return "kangaroo";
    case Method::kEdgeLlm:
      return "edgellm";
    case Method::kCoordGen:
      return "coordgen";
    case Method::kPld:
      return "pld";
    case Method::kSam:
      return "sam";
    case Method::kAuto:
      return "auto";
    case Method::kMirror:
      return "mirror";
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
  if (config.method == SpecConfig::Method::kChain || config.method == SpecConfig::Method::kMirror)
    return std::vector<int>(config.draft_len, 1);
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

int64_t max_tree_size(const SpecConfig& c) {
  switch (c.method) {
    case SpecConfig::Method::kNone:
      return 0;
    case SpecConfig::Method::kOptTree:
    case SpecConfig::Method::kCoordGen:
    case SpecConfig::Method::kPld:
    case SpecConfig::Method::kSam:
      return std::min(c.node_budget, c.max_tree_nodes);
    case SpecConfig::Method::kLever:
    case SpecConfig::Method::kEdgeLlm:
      return c.max_tree_nodes;
    case SpecConfig::Method::kAuto:  // its largest arm: LEVER's trees, or a 16-node retrieval tree
      return c.draft_model_path.empty() ? std::min(16, c.max_tree_nodes) : std::max(8, c.max_tree_nodes);
    case SpecConfig::Method::kCats:  // the chain, a correction and the extra branches per position
      return static_cast<int64_t>(c.draft_len) * (2 + c.cats.extra_branches);
    case SpecConfig::Method::kKangaroo:
      return c.draft_len;
    default:
      return tree_node_count(tree_widths(c));
  }
}

Status validate_spec_config(const SpecConfig& c) {
  if ((c.method == SpecConfig::Method::kOptTree || SpecConfig::is_retrieval(c.method)) &&
      (c.node_budget < 1 || c.node_budget > kMaxTreeNodes))
    return Status::Errorf("--node-budget %d is out of range (1..%lld)", c.node_budget,
                          static_cast<long long>(kMaxTreeNodes));
  if (c.max_tree_nodes < 1 || c.max_tree_nodes > 255)
    return Status::Errorf("--max-tree-nodes %d is out of range (1..255)", c.max_tree_nodes);
  if (c.max_tree_depth < 1 || c.max_tree_depth > kMaxDraftLen)
    return Status::Errorf("--max-tree-depth %d is out of range (1..%d)", c.max_tree_depth, kMaxDraftLen);
  if (!(c.prune.theta >= 0.0f && c.prune.theta <= 1.0f))
    return Status::Errorf("--lever-theta %g is out of range: it is a normalised score in [0, 1]",
                          static_cast<double>(c.prune.theta));
  if (!(c.prune.temperature > 0.0f)) return Status::Error("the pruning temperature must be positive");
  if (c.prune.root_keep < 1) return Status::Error("pruning must keep at least one child of the root");
  if (c.prune.shadow && c.prune.enabled) return Status::Error("shadow pruning measures retention without pruning");
  if (c.cats.extra_branches < 0 || c.cats.extra_branches > 8)
    return Status::Errorf("--cats-branches %d is out of range (0..8)", c.cats.extra_branches);
  if (!(c.edgellm.alpha > 0.0f && c.edgellm.alpha < 1.0f))
    return Status::Errorf("--edgellm-alpha %g is out of range: it is a confidence in (0, 1)",
                          static_cast<double>(c.edgellm.alpha));
  if (!(c.edgellm.alpha_min > 0.0f && c.edgellm.alpha_min <= c.edgellm.alpha_max && c.edgellm.alpha_max < 1.0f))
    return Status::Error("edgellm: the bounds on alpha must satisfy 0 < min <= max < 1");
  if (c.edgellm.fixed_tokens < 1 || c.edgellm.provisional_max < 1)
    return Status::Error("edgellm: the fixed tree size and the provisional bound must be at least 1");
  if (!(c.edgellm.token_threshold >= 0.0f && c.edgellm.token_threshold < 1.0f))
    return Status::Error("bld: the token threshold must be in [0, 1)");
  if (c.mirror.kappa < 1 || c.mirror.kappa > kMaxWidth)
    return Status::Errorf("--mirror-kappa %d is out of range (1..%d)", c.mirror.kappa, kMaxWidth);
  if (c.mirror.exit_layer < 0 && (c.mirror.exit_percent < 1 || c.mirror.exit_percent > 99))
    return Status::Errorf("mirror: the exit depth %d%% is out of range (1..99%%)", c.mirror.exit_percent);
  if (c.draft_len < 1 || c.draft_len > kMaxDraftLen)
    return Status::Errorf("--draft-len %d is out of range (1..%d)", c.draft_len, kMaxDraftLen);
  for (int w : c.tree_widths)
    if (w < 1 || w > kMaxWidth) return Status::Errorf("--tree-widths: width %d is out of range (1..%d)", w, kMaxWidth);
  if (c.tree_widths.size() > static_cast<size_t>(kMaxDraftLen))
    return Status::Errorf("--tree-widths: depth %zu is over %d", c.tree_widths.size(), kMaxDraftLen);
  const int64_t nodes = c.self_speculative() ? max_tree_size(c) : tree_node_count(tree_widths(c));
  if (nodes > kMaxTreeNodes)
    return Status::Errorf("the draft tree would have %lld nodes (limit %lld); use fewer or narrower levels",
                          static_cast<long long>(nodes), static_cast<long long>(kMaxTreeNodes));
  if (c.retrieval.history_max_tokens < 1) return Status::Error("--history-max-tokens must be at least 1");
  if (!c.retrieval.history_dir.empty() && c.method != SpecConfig::Method::kCoordGen)
    return Status::Error("--history-dir applies to --spec coordgen only");
  if (c.draft_min < 0 || c.draft_min > c.draft_len)
    return Status::Errorf("--draft-min %d is out of range (0..--draft-max/--draft-len %d)", c.draft_min, c.draft_len);
  if (!(c.draft_p_min >= 0.0f && c.draft_p_min < 1.0f))
    return Status::Errorf("--draft-p-min %g is out of range: it is a probability in [0, 1)",
                          static_cast<double>(c.draft_p_min));
  return Status::Ok();
}

}  // namespace sf
