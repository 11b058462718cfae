// A scratch directory owned by the running test alone. ctest runs every test case as its
// own process, two at a time, and sf::test::scratch_dir() empties the directory it
// returns, so tests that shared a name would wipe each other's files mid-run. Naming the
// directory after the suite, test and parameter keeps them apart. Created (emptied) on the
// first call in a test and reused by later calls in the same test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "test_paths.h"

namespace sf::test {

inline std::string per_test_scratch_dir() {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  std::replace(name.begin(), name.end(), '/', '_');
  static std::string last_name, last_dir;
  if (name != last_name) {
    last_dir = scratch_dir(name);
    last_name = name;
  }
  return last_dir;
}

}  // namespace sf::test
