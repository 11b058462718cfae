// StopFilter: text is cut exactly before the first stop string, no prefix of a stop
// string is ever released early, and held text is released once it cannot match.
#include "server/stop_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sf::server {
namespace {

// Feeds pieces one at a time; returns everything released (including the flush).
std::string feed(StopFilter& f, const std::vector<std::string>& pieces, std::vector<std::string>* released = nullptr) {
  std::string out;
  for (const auto& p : pieces) {
    std::string r = f.push(p);
    if (released) released->push_back(r);
    out += r;
  }
  return out + f.flush();
}

// Every lead byte is followed by all of its continuation bytes (enough for 2-byte text).
bool whole_characters(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xE0) == 0xC0) {
      if (i + 1 >= s.size() || (static_cast<unsigned char>(s[i + 1]) & 0xC0) != 0x80) return false;
      ++i;
    } else if ((c & 0xC0) == 0x80) {
      return false;  // a continuation byte without its lead
    }
  }
  return true;
}

TEST(StopFilter, NoStopsPassesEverythingThrough) {
  StopFilter f({});
  std::vector<std::string> released;
  EXPECT_EQ(feed(f, {"Hello", " wor", "ld"}, &released), "Hello world");
  EXPECT_EQ(released, (std::vector<std::string>{"Hello", " wor", "ld"}));
  EXPECT_FALSE(f.stopped());
}

TEST(StopFilter, CutsBeforeAStopSpanningPieces) {
  StopFilter f({"END"});
  std::vector<std::string> released;
  EXPECT_EQ(feed(f, {"abc E", "N", "Dxyz", "more"}, &released), "abc ");
  EXPECT_TRUE(f.stopped());
  // "E" and "EN" were held back, never released.
  EXPECT_EQ(released, (std::vector<std::string>{"abc ", "", "", ""}));
}

TEST(StopFilter, ReleasesAHeldPrefixThatStopsMatching) {
  StopFilter f({"END"});
  std::vector<std::string> released;
  EXPECT_EQ(feed(f, {"x E", "Nx"}, &released), "x ENx");
  EXPECT_EQ(released[0], "x ");
  EXPECT_EQ(released[1], "ENx");
  EXPECT_FALSE(f.stopped());
}

TEST(StopFilter, HeldTailIsFlushedAtTheEnd) {
  StopFilter f({"stop here"});
  EXPECT_EQ(f.push("we stop"), "we ");
  EXPECT_EQ(f.flush(), "stop");
}

TEST(StopFilter, EarliestOfSeveralStopsWins) {
  StopFilter f({"cat", "a c"});
  EXPECT_EQ(feed(f, {"a", " ", "cat"}), "");
  StopFilter g({"dog", "at"});
  EXPECT_EQ(feed(g, {"the cat and dog"}), "the c");
}

TEST(StopFilter, OverlappingPrefixesAreHandled) {
  // "aab" after "aaa...": the hold must restart inside the held text.
  StopFilter f({"aab"});
  EXPECT_EQ(feed(f, {"a", "a", "a", "a", "b", "tail"}), "aa");
  EXPECT_TRUE(f.stopped());
}

TEST(StopFilter, NeverSplitsAMultiByteCharacter) {
  // The stop starts with the same lead byte as the released character; holding happens at
  // character boundaries only, so every release is valid UTF-8.
  StopFilter f({"\xC3\xA9t\xC3\xA9"});  // "été"
  std::vector<std::string> released;
  const std::string out = feed(f, {"caf\xC3\xA9", " \xC3\xA9t", "\xC3\xA9 fin"}, &released);
  EXPECT_EQ(out, "caf\xC3\xA9 ");
  for (const auto& r : released) EXPECT_TRUE(whole_characters(r)) << r;
}

TEST(StopFilter, EmptyStopStringsAreIgnored) {
  StopFilter f({""});
  EXPECT_EQ(feed(f, {"abc"}), "abc");
}

}  // namespace
}  // namespace sf::server
