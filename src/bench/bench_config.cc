#include "bench/bench_config.h"

#include <algorithm>
#include <charconv>

namespace sf::bench {
namespace {

// BiLD's fallback threshold when `bld` has no number: the draft verifies as soon as its
// most likely next token is below 30% (BiLD sweeps 0.2-0.6 for its fallback policy).
constexpr float kBldDefaultThreshold = 0.3f;

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> items;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    items.push_back(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return items;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool retrieval_kind(BenchMethod::Kind k) {
  using K = BenchMethod::Kind;
  return k == K::kCoordGen || k == K::kCoordGenNoCalib || k == K::kCoordGenNoReuse || k == K::kCoordGenHybrid ||
         k == K::kPld || k == K::kSam;
}

// auto with a profile kept between its sessions, or afresh in each (auto-cold).
bool auto_kind(BenchMethod::Kind k) { return k == BenchMethod::Kind::kAuto || k == BenchMethod::Kind::kAutoCold; }

bool has(const BenchConfig& c, BenchMethod m) {
  return std::find(c.methods.begin(), c.methods.end(), m) != c.methods.end();
}

const char* kind_name(BenchMethod::Kind k) {
  using K = BenchMethod::Kind;
  switch (k) {
    case K::kAr:
      return "ar";
    case K::kFlashAr:
      return "flash-ar";
    case K::kChain:
      return "chain";
    case K::kTree:
      return "tree";
    case K::kOptTree:
      return "opt-tree";
    case K::kLever:
      return "lever";
    case K::kLeverNoPrune:
      return "lever-noprune";
    case K::kLeverShadow:
      return "lever-shadow";
    case K::kCats:
      return "cats";
    case K::kCatsNoAdapter:
      return "cats-noadapter";
    case K::kKangaroo:
      return "kangaroo";
    case K::kEdgeLlm:
      return "edgellm";
    case K::kEdgeLlmNoPacer:
      return "edgellm-nopacer";
    case K::kEdgeLlmNoFallback:
      return "edgellm-nofallback";
    case K::kEdgeLlmNoProvisional:
      return "edgellm-noprovisional";
    case K::kEdgeLlmNoCost:
      return "edgellm-nocost";
    case K::kEdgeLlmNoSize:
      return "edgellm-nosize";
    case K::kEdgeLlmRawConf:
      return "edgellm-rawconf";
    case K::kEdgeLlmPaced:
      return "edgellm-paced";
    case K::kBld:
      return "bld";
    case K::kCoordGen:
      return "coordgen";
    case K::kCoordGenNoCalib:
      return "coordgen-nocalib";
    case K::kCoordGenNoReuse:
      return "coordgen-noreuse";
    case K::kCoordGenHybrid:
      return "coordgen-hybrid";
    case K::kPld:
      return "pld";
    case K::kSam:
      return "sam";
    case K::kMirror:
      return "mirror";
    case K::kAuto:
      return "auto";
    case K::kAutoCold:
      return "auto-cold";
  }
  return "?";
}

// "K", "K@L", "K@P%", "@L" or "@P%" after "mirror:" (kappa, exit layer or depth percent).
Result<BenchMethod> parse_mirror_params(std::string_view item, std::string_view param) {
  BenchMethod m{BenchMethod::Kind::kMirror, 0};
  const auto bad = [&] {
    return Status::Error(
        "method '" + std::string(item) +
        "': mirror takes mirror:KAPPA, mirror:KAPPA@LAYER or mirror:KAPPA@PERCENT% (e.g. mirror:8@50%)");
  };
  const auto number = [](std::string_view text, int* out) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
  };
  std::string_view kappa = param, exit;
  if (const size_t at = param.find('@'); at != std::string_view::npos) {
    kappa = param.substr(0, at);
    exit = param.substr(at + 1);
    if (exit.empty()) return bad();
  }
  if (!kappa.empty() && (!number(kappa, &m.param) || m.param < 1 || m.param > 32)) return bad();
  if (!exit.empty()) {
    const bool percent = exit.back() == '%';
    if (percent) exit.remove_suffix(1);
    int v = 0;
    if (!number(exit, &v) || v < 1 || (percent && v > 99)) return bad();
    m.param2 = percent ? -v : v;
  }
  return m;
}

}  // namespace

SpecConfig spec_for(const BenchConfig& c, BenchMethod m) {
  using K = BenchMethod::Kind;
  SpecConfig spec;
  spec.draft_model_path = c.draft_model_path;
  spec.draft_len = c.draft_len;
  spec.node_budget = c.node_budget;
  spec.max_tree_nodes = c.max_tree_nodes;
  spec.profile_path = c.profile_path;
  switch (m.kind) {
    case K::kChain:
      spec.method = SpecConfig::Method::kChain;
      if (m.param > 0) spec.draft_len = m.param;
      break;
    case K::kTree:
      spec.method = SpecConfig::Method::kTree;
      if (!c.tree_widths.empty()) {
        spec.tree_widths = c.tree_widths;
        spec.draft_len = static_cast<int>(c.tree_widths.size());  // the widths fix the depth
      }
      break;
    case K::kOptTree:
      spec.method = SpecConfig::Method::kOptTree;
      if (m.param > 0) spec.node_budget = m.param;
      break;
    case K::kLever:
    case K::kLeverNoPrune:
    case K::kLeverShadow:
      spec.method = SpecConfig::Method::kLever;
      spec.prune = c.prune;
      spec.prune.enabled = m.kind == K::kLever;
      spec.prune.shadow = m.kind == K::kLeverShadow;
      break;
    case K::kCats:
    case K::kCatsNoAdapter:
    case K::kKangaroo:
      spec.method = m.kind == K::kKangaroo ? SpecConfig::Method::kKangaroo : SpecConfig::Method::kCats;
      spec.draft_model_path.clear();
      spec.cats = c.cats;
      if (m.kind == K::kCatsNoAdapter) spec.cats.draft_adapter.clear();
      if (m.kind != K::kCats) spec.cats.verifier_adapter.clear();
      if (m.param > 0) spec.draft_len = m.param;
      break;
    case K::kEdgeLlm:
    case K::kEdgeLlmNoPacer:
    case K::kEdgeLlmNoFallback:
    case K::kEdgeLlmNoProvisional:
    case K::kEdgeLlmNoCost:
    case K::kEdgeLlmNoSize:
    case K::kEdgeLlmRawConf:
    case K::kEdgeLlmPaced:
    case K::kBld:
      spec.method = SpecConfig::Method::kEdgeLlm;
      spec.edgellm = c.edgellm;
      spec.edgellm.pacer = m.kind != K::kEdgeLlmNoPacer && m.kind != K::kBld;
      spec.edgellm.fallback = m.kind != K::kEdgeLlmNoFallback;
      spec.edgellm.provisional = c.edgellm.provisional && m.kind != K::kEdgeLlmNoProvisional && m.kind != K::kBld;
      spec.edgellm.cost_stop = m.kind != K::kEdgeLlmNoCost && m.kind != K::kBld;
      spec.edgellm.measured_size = m.kind != K::kEdgeLlmNoSize && m.kind != K::kBld;
      spec.edgellm.calibrated_pacer = m.kind != K::kEdgeLlmRawConf;
      // The paper's pacer, and the baselines measured with its raw-probability fallback
      // before the most likely shape became the default, keep the paced shape.
      if (m.kind == K::kEdgeLlmPaced || m.kind == K::kEdgeLlmRawConf || m.kind == K::kBld)
        spec.edgellm.shape = EdgeLlmConfig::Shape::kPaced;
      if (m.kind == K::kBld) spec.edgellm.token_threshold = m.param > 0 ? m.param / 100.0f : kBldDefaultThreshold;
      break;
    case K::kCoordGen:
    case K::kCoordGenNoCalib:
    case K::kCoordGenNoReuse:
    case K::kCoordGenHybrid:
      spec.method = SpecConfig::Method::kCoordGen;
      spec.retrieval = c.retrieval;
      spec.retrieval.calibrate = m.kind != K::kCoordGenNoCalib;
      spec.retrieval.reuse = m.kind != K::kCoordGenNoReuse;
      if (m.param > 0) spec.node_budget = m.param;
      if (m.kind != K::kCoordGenHybrid) spec.draft_model_path.clear();  // retrieval alone
      break;
    case K::kPld:
    case K::kSam:
      spec.method = m.kind == K::kPld ? SpecConfig::Method::kPld : SpecConfig::Method::kSam;
      if (m.param > 0) spec.node_budget = m.param;
      spec.draft_model_path.clear();
      break;
    case K::kMirror:
      spec.method = SpecConfig::Method::kMirror;
      spec.mirror = c.mirror;
      spec.draft_threads = c.draft_threads;
      if (m.param > 0) spec.mirror.kappa = m.param;
      if (m.param2 > 0) spec.mirror.exit_layer = m.param2;
      if (m.param2 < 0) {
        spec.mirror.exit_layer = -1;
        spec.mirror.exit_percent = -m.param2;
      }
      break;
    case K::kAuto:
    case K::kAutoCold:
      spec.method = SpecConfig::Method::kAuto;
      spec.prune = c.prune;
      if (m.param > 0) spec.auto_explore_share = m.param / 100.0;
      spec.auto_profile_dir = m.kind == K::kAuto ? c.auto_profile_dir : std::string();
      // An auto:N row keeps its own profile: sharing auto's, it started each session from
      // the arms auto's exploring had measured, and a smaller share looked better for
      // exploring on auto's time (docs/auto.md, the fd61ed8 run).
      if (m.param > 0 && !spec.auto_profile_dir.empty())
        spec.auto_profile_dir += "/explore-" + std::to_string(m.param) + "pct";
      break;
    default:
      spec.method = SpecConfig::Method::kNone;
  }
  return spec;
}

std::string method_name(BenchMethod m) {
  std::string name = kind_name(m.kind);
  if (m.param > 0) name += ":" + std::to_string(m.param);
  if (m.param2 != 0) {
    if (m.param == 0) name += ":";
    name += "@" + (m.param2 > 0 ? std::to_string(m.param2) : std::to_string(-m.param2) + "%");
  }
  return name;
}

Result<std::vector<BenchMethod>> parse_methods(std::string_view text) {
  using K = BenchMethod::Kind;
  static const K kAll[] = {K::kAr,
                           K::kFlashAr,
                           K::kChain,
                           K::kTree,
                           K::kOptTree,
                           K::kLever,
                           K::kLeverNoPrune,
                           K::kLeverShadow,
                           K::kEdgeLlm,
                           K::kEdgeLlmNoPacer,
                           K::kEdgeLlmNoFallback,
                           K::kEdgeLlmNoProvisional,
                           K::kEdgeLlmNoCost,
                           K::kEdgeLlmNoSize,
                           K::kEdgeLlmRawConf,
                           K::kEdgeLlmPaced,
                           K::kBld,
                           K::kCats,
                           K::kCatsNoAdapter,
                           K::kKangaroo,
                           K::kMirror,
                           K::kAuto,
                           K::kAutoCold};
  static const K kRetrieval[] = {K::kCoordGen, K::kCoordGenNoCalib, K::kCoordGenNoReuse, K::kCoordGenHybrid, K::kPld,
                                 K::kSam};
  std::vector<BenchMethod> methods;
  for (std::string_view item : split_commas(text)) {
    item = trim(item);
    std::string_view base = item, param;
    if (const size_t colon = item.find(':'); colon != std::string_view::npos) {
      base = item.substr(0, colon);
      param = item.substr(colon + 1);
    }
    const K* found = nullptr;
    for (const K& k : kAll)
      if (base == kind_name(k)) found = &k;
    for (const K& k : kRetrieval)
      if (base == kind_name(k)) found = &k;
    if (!found)
      return Status::Error(
          "unknown method '" + std::string(item) +
          "' (known: ar, flash-ar, chain[:gamma], tree, opt-tree[:nodes], lever, lever-noprune, lever-shadow, "
          "edgellm, edgellm-nopacer, edgellm-nofallback, edgellm-noprovisional, edgellm-nocost, edgellm-nosize, "
          "edgellm-rawconf, edgellm-paced, "
          "bld[:percent], "
          "cats[:gamma], "
          "cats-noadapter[:gamma], kangaroo[:gamma], coordgen[:nodes], coordgen-nocalib, coordgen-noreuse, "
          "coordgen-hybrid, pld[:nodes], sam[:nodes], mirror[:kappa][@layer|@percent%], auto[:explore_percent], "
          "auto-cold[:explore_percent])");
    BenchMethod m{*found, 0};
    if (m.kind == K::kMirror) {
      SF_ASSIGN_OR_RETURN(m, parse_mirror_params(item, param));
      param = {};
    }
    if (!param.empty()) {
      const auto [ptr, ec] = std::from_chars(param.data(), param.data() + param.size(), m.param);
      if (ec != std::errc() || ptr != param.data() + param.size() || m.param < 1 ||
          (m.kind != K::kChain && m.kind != K::kOptTree && m.kind != K::kBld && m.kind != K::kCats &&
           m.kind != K::kCatsNoAdapter && m.kind != K::kKangaroo && !auto_kind(m.kind) && !retrieval_kind(m.kind)) ||
          ((m.kind == K::kBld || auto_kind(m.kind)) && m.param > 99))
        return Status::Error("method '" + std::string(item) +
                             "': only chain:GAMMA, opt-tree:NODES, bld:PERCENT (1..99), "
                             "cats/cats-noadapter/kangaroo:GAMMA, auto:EXPLORE_PERCENT (1..99) and the retrieval "
                             "methods (NODES) take a positive number");
    }
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
  }
  return methods;
}

Result<std::vector<BenchBudget>> parse_budgets(std::string_view text) {
  std::vector<BenchBudget> budgets;
  for (std::string_view item : split_commas(text)) {
    item = trim(item);
    if (item.empty()) return Status::Error("empty memory budget in '" + std::string(text) + "'");
    auto parsed = MemoryBudget::parse(item);
    if (!parsed.ok()) return parsed.status().with_context("budget '" + std::string(item) + "'");
    budgets.push_back({std::string(item), *parsed});
  }
  return budgets;
}

Result<std::vector<int>> parse_tree_widths(std::string_view text) {
  std::vector<int> widths;
  for (std::string_view item : split_commas(text)) {
    item = trim(item);
    int w = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), w);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || w < 1 || w > 64)
      return Status::Error("tree widths '" + std::string(text) + "': each must be an integer in 1..64");
    widths.push_back(w);
  }
  return widths;
}

Status validate(const BenchConfig& c) {
  if (c.methods.empty()) return Status::Error("no methods to run (--methods)");
  const bool only_ar = c.methods.size() == 1 && c.methods[0] == BenchMethod::kAr;
  if (c.budgets.empty() && !only_ar) return Status::Error("no memory budgets to run at (--budgets)");
  if (c.n_predict < 1) return Status::Error("--n-predict must be at least 1");
  for (BenchMethod m : c.methods) {
    if (!m.speculative()) continue;
    const bool self_spec = m.kind == BenchMethod::Kind::kCats || m.kind == BenchMethod::Kind::kCatsNoAdapter ||
                           m.kind == BenchMethod::Kind::kKangaroo;
    if (m.kind == BenchMethod::Kind::kCats && c.cats.draft_adapter.empty() && c.cats.verifier_adapter.empty())
      return Status::Error(method_name(m) +
                           " needs its adapters (--cats-draft-adapter, --cats-verifier-adapter); cats-noadapter runs "
                           "the plain exit head");
    if (self_spec) {
      SF_RETURN_IF_ERROR(validate_spec_config(spec_for(c, m)));
      continue;
    }
    const bool no_draft_needed =
        (retrieval_kind(m.kind) && m.kind != BenchMethod::Kind::kCoordGenHybrid) || auto_kind(m.kind);
    if (c.draft_model_path.empty() && !no_draft_needed)
      return Status::Error(method_name(m) + " needs a draft model (--draft FILE.gguf)");
    SF_RETURN_IF_ERROR(validate_spec_config(spec_for(c, m)));
  }
  if (!c.retrieval.history_dir.empty()) {
    // A store written by one method's run would warm the next one's: one per bench run.
    int coordgen_runs = 0;
    for (BenchMethod m : c.methods)
      if (retrieval_kind(m.kind) && m.kind != BenchMethod::Kind::kPld && m.kind != BenchMethod::Kind::kSam)
        coordgen_runs += static_cast<int>(c.budgets.size());
    if (coordgen_runs != 1)
      return Status::Error(
          "--history-dir needs exactly one coordgen method at one budget per bench run (the store one run writes "
          "would warm the next); run cold and warm as separate bench runs");
  }
  if (c.prompt_file.empty() && c.datasets.empty()) return Status::Error("no prompts (--dataset or --prompt-file)");
  if (c.warmup < 0) return Status::Error("--warmup must not be negative");
  if (c.repetitions < 1) return Status::Error("--repeat must be at least 1");
  return Status::Ok();
}

std::vector<BenchRunSpec> plan_runs(const BenchConfig& c, const SessionOptions& base) {
  std::vector<BenchRunSpec> runs;
  if (has(c, BenchMethod::kAr) || c.compare_to_ar) {
    BenchRunSpec ar{BenchMethod::kAr, {"resident", MemoryBudget{}}, base};
    ar.options.mem_budget = MemoryBudget{};
    ar.options.spec = SpecConfig{};
    runs.push_back(ar);
  }
  for (const BenchBudget& b : c.budgets) {
    std::vector<BenchMethod> order;
    if (has(c, BenchMethod::kFlashAr)) order.push_back(BenchMethod::kFlashAr);
    for (BenchMethod m : c.methods)
      if (m.speculative()) order.push_back(m);
    for (BenchMethod m : order) {
      BenchRunSpec run{m, b, base};
      run.options.mem_budget = b.budget;
      run.options.spec = m == BenchMethod::kFlashAr ? SpecConfig{} : spec_for(c, m);
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

int spec_context_margin(const BenchConfig& c) {
  int margin = 1;
  for (BenchMethod m : c.methods)
    if (m.speculative()) margin = std::max<int>(margin, static_cast<int>(max_tree_size(spec_for(c, m))) + 1);
  return margin;
}

}  // namespace sf::bench
