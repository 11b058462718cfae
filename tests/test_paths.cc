#include "test_paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace sf::test {
namespace {
// Scratch folders made by this process, removed when it exits.
std::mutex g_mutex;
std::vector<std::filesystem::path>* g_dirs = nullptr;
void remove_scratch_dirs() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_dirs) return;
  for (const auto& d : *g_dirs) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}
}  // namespace

namespace {
// The environment variable lets a run pretend the data is elsewhere (or absent).
std::string shared_root() {
  const char* env = std::getenv("SPECFLASH_SHARED_DIR");
  return env != nullptr && *env != 0 ? env : SPECFLASH_SHARED_DIR;
}
}  // namespace

std::string shared_path(const std::string& rel) { return shared_root() + "/" + rel; }
bool shared_available() { return std::filesystem::is_directory(shared_root()); }
std::string source_path(const std::string& rel) { return std::string(SPECFLASH_SOURCE_DIR) + "/" + rel; }
std::string binary_path(const std::string& rel) { return std::string(SPECFLASH_BINARY_DIR) + "/" + rel; }

std::string scratch_dir(const std::string& name) {
  // ctest runs tests in parallel, one process each: the pid keeps two tests that use the
  // same name from wiping each other's files.
  std::filesystem::path p =
      std::filesystem::path(SPECFLASH_BINARY_DIR) / "test-scratch" / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_dirs) {
    g_dirs = new std::vector<std::filesystem::path>();
    std::atexit(remove_scratch_dirs);
  }
  g_dirs->push_back(p);
  return p.string();
}
}  // namespace sf::test
