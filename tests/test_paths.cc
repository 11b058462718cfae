#include "test_paths.h"

#include <filesystem>

namespace sf::test {
std::string shared_path(const std::string& rel) { return std::string(SPECFLASH_SHARED_DIR) + "/" + rel; }
std::string source_path(const std::string& rel) { return std::string(SPECFLASH_SOURCE_DIR) + "/" + rel; }
std::string binary_path(const std::string& rel) { return std::string(SPECFLASH_BINARY_DIR) + "/" + rel; }
std::string scratch_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(SPECFLASH_BINARY_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}
}  // namespace sf::test
