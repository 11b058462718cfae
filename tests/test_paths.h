// Paths the tests need: the shared/ folder beside the repo, the source tree and the
// build tree (where build/specflash lives). Set by CMake at configure time.
#pragma once
#include <string>

namespace sf::test {
std::string shared_path(const std::string& rel);  // ../shared/<rel>, or $SPECFLASH_SHARED_DIR/<rel>
// Whether that folder exists. Unit tests that read it begin with SF_SKIP_WITHOUT_SHARED()
// so that a checkout without the data still runs every other unit test.
bool shared_available();
std::string source_path(const std::string& rel);  // <repo>/<rel>
std::string binary_path(const std::string& rel);  // <build>/<rel>
// A fresh empty directory under the build tree for this test's scratch files, private to
// this process (parallel ctest runs cannot collide) and removed when the process exits.
std::string scratch_dir(const std::string& name);
}  // namespace sf::test

#define SF_SKIP_WITHOUT_SHARED() \
  if (!::sf::test::shared_available()) GTEST_SKIP() << "needs the shared/ folder beside the repository"
