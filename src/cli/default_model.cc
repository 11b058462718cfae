#include "cli/default_model.h"

#include <filesystem>

namespace sf::cli {
std::string default_model_path() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path rel = "models/stories260K.gguf";
  if (!ec) {
    // Installed (cmake --install): PREFIX/bin/specflash and PREFIX/share/specflash/.
    const fs::path installed = exe.parent_path().parent_path() / "share/specflash/stories260K.gguf";
    if (fs::exists(installed, ec)) return installed.string();
    // A build tree: models/ in the source folder above the binary.
    for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      if (fs::exists(dir / rel, ec)) return (dir / rel).string();
  }
  return rel.string();
}
}  // namespace sf::cli
