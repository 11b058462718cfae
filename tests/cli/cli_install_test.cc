// `cmake --install` gives a specflash that runs from any directory with no arguments: the
// embedded default model is installed beside it (PREFIX/share/specflash).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

TEST(Install, RunsTheDefaultModelFromAnyDirectory) {
  const std::string prefix = sf::test::per_test_scratch_dir() + "/prefix";
  const std::string log = sf::test::per_test_scratch_dir() + "/install.log";
  const std::string install = "cmake --install " + sf::test::shell_quote(sf::test::binary_path("")) + " --prefix " +
                              sf::test::shell_quote(prefix) + " >" + sf::test::shell_quote(log) + " 2>&1";
  ASSERT_EQ(std::system(install.c_str()), 0) << sf::test::read_file(log);
  ASSERT_TRUE(std::filesystem::exists(prefix + "/share/specflash/stories260K.gguf"));
  // From / (no models/ folder anywhere above it), greedy, no -m.
  const std::string out = sf::test::per_test_scratch_dir() + "/out.txt";
  const std::string run = "cd / && " + sf::test::shell_quote(prefix + "/bin/specflash") +
                          " run -p 'Once upon a time' -n 8 --temp 0 >" + sf::test::shell_quote(out) + " 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << sf::test::read_file(out);
  EXPECT_EQ(sf::test::read_file(out).rfind(", there was a little girl", 0), 0u) << sf::test::read_file(out);
}

}  // namespace
}  // namespace sf
