#include "cli/default_model.h"

#include <filesystem>

namespace sf::cli {
std::string default_model_path() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path rel = "models/stories260K.gguf";
  if (!ec) {
    for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      if (std::filesystem::exists(dir / rel)) return (dir / rel).string();
  }
  return rel.string();
}
}  // namespace sf::cli
