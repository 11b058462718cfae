// Session's side of auto's profile (spec/auto_profile.h): which file holds what auto learnt
// for this session's setting, starting every slot's auto builder from it, and saving after
// each generation.
//
// A profile is an optimisation, never a requirement: an unreadable, foreign or unwritable
// file costs a warning and a fresh start, not the run.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/log.h"
#include "engine/session.h"
#include "spec/auto_tree_builder.h"

namespace sf {
namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

}  // namespace

std::string Session::auto_profile_key() const {
  const LatencyProfile::Key k = profile_key();
  const SpecConfig& spec = options_.spec;
  std::string key = "model=" + k.model;
  key += "; draft=" + (spec.draft_model_path.empty() ? std::string("retrieval") : file_identity(spec.draft_model_path));
  key += "; budget=" + k.budget;
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.0f", k.io_bandwidth);
  key += "; io_bandwidth=" + std::string(k.io_bandwidth > 0 ? rate : "real");
  key += "; threads=" + std::to_string(k.threads);
  key += "; host=" + host_name();
  // The arms, in order: a build with other arms (or other arm settings) starts afresh.
  key += "; arms=";
  if (const auto* autob = dynamic_cast<const AutoTreeBuilder*>(slots_[0].builder.get()))
    for (const AutoArm& arm : autob->arms()) key += arm.name + (arm.prune ? "+prune" : "") + ",";
  key += " max_nodes=" + std::to_string(spec.max_tree_nodes) + " max_depth=" + std::to_string(spec.max_tree_depth);
  return key;
}

void Session::start_auto_profile() {
  const std::string& dir = options_.spec.auto_profile_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    SF_LOG_WARN("auto: cannot create %s (%s); what auto learns is not kept", dir.c_str(), ec.message().c_str());
    return;
  }
  auto_profile_key_ = auto_profile_key();
  const std::string& key = auto_profile_key_;
  auto_profile_path_ = sf::auto_profile_path(dir, key);
  if (!std::filesystem::exists(auto_profile_path_, ec)) {
    SF_LOG_INFO("auto: no profile for this setting yet; it will be kept in %s", auto_profile_path_.c_str());
    return;
  }
  auto loaded = AutoProfile::load(auto_profile_path_);
  if (!loaded.ok()) {
    SF_LOG_WARN("auto: %s; starting afresh (the file will be rewritten)", loaded.status().message().c_str());
    return;
  }
  if (loaded->key != key) {
    // Two keys with one hash: rare, but the evidence would belong to another setting.
    SF_LOG_WARN("auto: %s was learnt for another setting (%s); starting afresh", auto_profile_path_.c_str(),
                loaded->key.c_str());
    return;
  }
  auto_profile_generations_ = loaded->generations;
  for (Slot& slot : slots_)
    if (auto* autob = dynamic_cast<AutoTreeBuilder*>(slot.builder.get())) autob->start_from(*loaded);
  SF_LOG_INFO("auto: starting from %s (%lld generations, %zu arms measured)", auto_profile_path_.c_str(),
              static_cast<long long>(loaded->generations), loaded->arms.size());
}

void Session::save_auto_profile(TreeBuilder& builder) {
  const auto* autob = dynamic_cast<const AutoTreeBuilder*>(&builder);
  if (!autob) return;
  AutoProfile profile = autob->profile();
  profile.key = auto_profile_key_;
  profile.generations = ++auto_profile_generations_;
  const Status saved = profile.save(auto_profile_path_);
  if (!saved.ok() && !auto_profile_warned_) {
    auto_profile_warned_ = true;
    SF_LOG_WARN("auto: %s; what auto learns is not kept", saved.message().c_str());
  }
}

}  // namespace sf
