#include "spec/auto_profile.h"

#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/fnv1a.h"
#include "base/output_file.h"

namespace sf {

const ArmEvidence* AutoProfile::find(const std::string& arm) const {
  for (const auto& [name, evidence] : arms)
    if (name == arm) return &evidence;
  return nullptr;
}

std::string AutoProfile::to_json() const {
  nlohmann::json j;
  j["format"] = "specflash-auto-profile";
  j["version"] = kFormatVersion;
  j["key"] = key;
  j["generations"] = generations;
  j["catch_up_seconds_per_token"] = catch_up_seconds_per_token;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, e] : arms)
    list.push_back({{"name", name},
                    {"tokens", e.tokens},
                    {"seconds", e.seconds},
                    {"weight", e.weight},
                    {"tokens_sq", e.tokens_sq},
                    {"seconds_sq", e.seconds_sq},
                    {"tokens_seconds", e.tokens_seconds}});
  j["arms"] = std::move(list);
  return j.dump(1);
}

Result<AutoProfile> AutoProfile::from_json(const std::string& text, const std::string& source_name) {
  AutoProfile p;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("format").get<std::string>() != "specflash-auto-profile")
      return Status::Errorf("%s: not an auto profile", source_name.c_str());
    const int version = j.at("version").get<int>();
    if (version != kFormatVersion)
      return Status::Errorf("%s: auto profile format %d, this build reads %d", source_name.c_str(), version,
                            kFormatVersion);
    p.key = j.at("key").get<std::string>();
    p.generations = j.at("generations").get<int64_t>();
    p.catch_up_seconds_per_token = j.at("catch_up_seconds_per_token").get<double>();
    if (!std::isfinite(p.catch_up_seconds_per_token) || p.catch_up_seconds_per_token < 0)
      return Status::Errorf("%s: catch_up_seconds_per_token out of range", source_name.c_str());
    for (const auto& arm : j.at("arms")) {
      ArmEvidence e;
      e.tokens = arm.at("tokens").get<double>();
      e.seconds = arm.at("seconds").get<double>();
      e.weight = arm.at("weight").get<double>();
      e.tokens_sq = arm.at("tokens_sq").get<double>();
      e.seconds_sq = arm.at("seconds_sq").get<double>();
      e.tokens_seconds = arm.at("tokens_seconds").get<double>();
      const std::string name = arm.at("name").get<std::string>();
      if (!e.valid()) return Status::Errorf("%s: arm %s: evidence out of range", source_name.c_str(), name.c_str());
      p.arms.emplace_back(name, e);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Errorf("%s: not a readable auto profile (%s)", source_name.c_str(), e.what());
  }
  return p;
}

Status AutoProfile::save(const std::string& path) const {
  // A name of this process's own: two runs saving at once must not write one temporary.
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  FILE* f = open_output_file(tmp);
  if (!f) return Status::Errorf("%s: cannot write the auto profile (%s)", tmp.c_str(), std::strerror(errno));
  const std::string text = to_json() + "\n";
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  // No fsync: it runs after every generation, and losing the last update costs little.
  return commit_output_file(f, ok, ok ? 0 : errno, tmp, path, Durability::kCache);
}

Result<AutoProfile> AutoProfile::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status::Errorf("%s: cannot open the auto profile", path.c_str());
  std::stringstream ss;
  ss << f.rdbuf();
  return from_json(ss.str(), path);
}

std::string auto_profile_path(const std::string& directory, const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof(name), "%016" PRIx64 ".json", fnv1a(key.data(), key.size()));
  return directory + "/" + name;
}

std::string default_auto_profile_directory() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/specflash/auto";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/specflash/auto";
  return "";
}

}  // namespace sf
