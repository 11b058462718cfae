// The suffix automaton against brute-force oracles on random texts: longest suffix match,
// the longest suffix with a continuation, next-token occurrence counts and first
// occurrences, with several documents (separators) and small alphabets (many repeats).
#include "spec/suffix_automaton.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "spec/prompt_lookup.h"

namespace sf {
namespace {

using Text = std::vector<int32_t>;

// Whether `s` occurs in `text` ending at position e (inclusive).
bool ends_at(const Text& text, const Text& s, size_t e) {
  if (s.size() > e + 1) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (text[e + 1 - s.size() + i] != s[i]) return false;
  return true;
}

// Longest suffix of q occurring in text (queries hold no separators, so neither do matches).
size_t oracle_match(const Text& text, const Text& q) {
  for (size_t len = q.size(); len > 0; --len) {
    const Text s(q.end() - static_cast<std::ptrdiff_t>(len), q.end());
    for (size_t e = 0; e < text.size(); ++e)
      if (ends_at(text, s, e)) return len;
  }
  return 0;
}

// Counts of the real tokens that follow occurrences of s, and the first end position.
std::map<int32_t, uint32_t> oracle_next(const Text& text, const Text& s, int64_t* first_end) {
  std::map<int32_t, uint32_t> next;
  *first_end = -1;
  for (size_t e = 0; e < text.size(); ++e) {
    if (!ends_at(text, s, e)) continue;
    if (*first_end < 0) *first_end = static_cast<int64_t>(e);
    if (e + 1 < text.size() && text[e + 1] != SuffixAutomaton::kSeparator) ++next[text[e + 1]];
  }
  return next;
}

TEST(SuffixAutomaton, MatchesBruteForceOnRandomTexts) {
  std::mt19937 rng(7);
  int checked_continuations = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int alphabet = 2 + trial % 5;
    std::uniform_int_distribution<int32_t> tok(0, alphabet - 1);
    SuffixAutomaton sam;
    Text text;
    const int docs = 1 + trial % 3;
    for (int d = 0; d < docs; ++d) {
      Text doc(5 + rng() % 60);
      for (auto& t : doc) t = tok(rng);
      if (d + 1 < docs) {
        sam.add_document(doc);
        text.insert(text.end(), doc.begin(), doc.end());
        text.push_back(SuffixAutomaton::kSeparator);
      } else {
        for (int32_t t : doc) sam.extend(t);  // the last one stays open, like the live text
        text.insert(text.end(), doc.begin(), doc.end());
      }
    }
    ASSERT_EQ(sam.text(), text);
    // Queries: random strings, matched token by token.
    for (int qn = 0; qn < 20; ++qn) {
      Text q;
      SuffixAutomaton::Match m;
      for (int i = 0; i < 25; ++i) {
        q.push_back(tok(rng));
        m = sam.step(m, q.back());
        ASSERT_EQ(static_cast<size_t>(m.length), oracle_match(text, q)) << "trial " << trial;
        // The longest suffix of the match followed by a real token somewhere.
        const SuffixAutomaton::Match c = sam.continuation(m);
        size_t want = 0;
        int64_t first = -1;
        for (size_t len = static_cast<size_t>(m.length); len > 0; --len) {
          const Text s(q.end() - static_cast<std::ptrdiff_t>(len), q.end());
          if (!oracle_next(text, s, &first).empty()) {
            want = len;
            break;
          }
        }
        ASSERT_EQ(static_cast<size_t>(c.length), want);
        if (c.length == 0) continue;
        const Text s(q.end() - c.length, q.end());
        const auto next = oracle_next(text, s, &first);
        std::vector<std::pair<int32_t, uint32_t>> got;
        sam.next_tokens(c, &got);
        ASSERT_EQ(got.size(), next.size());
        for (size_t k = 0; k < got.size(); ++k) {
          EXPECT_EQ(next.at(got[k].first), got[k].second);
          if (k > 0) {
            EXPECT_GE(got[k - 1].second, got[k].second) << "sorted by count";
          }
        }
        EXPECT_EQ(sam.first_end(c), first);
        ++checked_continuations;
      }
    }
  }
  EXPECT_GT(checked_continuations, 1000);
}

TEST(SuffixAutomaton, CountsStayExactWhileTheTextGrows) {
  // Extending after a count refresh must make the next query refresh again.
  std::mt19937 rng(3);
  SuffixAutomaton sam;
  Text text;
  for (int i = 0; i < 400; ++i) {
    const int32_t t = static_cast<int32_t>(rng() % 3);
    sam.extend(t);
    text.push_back(t);
    const SuffixAutomaton::Match c = sam.continuation(sam.whole_text());
    if (c.length == 0) continue;
    int64_t first = 0;
    const auto want = oracle_next(text, Text(text.end() - c.length, text.end()), &first);
    std::vector<std::pair<int32_t, uint32_t>> got;
    sam.next_tokens(c, &got);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [tok, n] : got) EXPECT_EQ(want.at(tok), n);
  }
}

TEST(SuffixAutomaton, StatesStayLinearInTheText) {
  // At most 2n - 1 states: the construction adds O(1) per token (amortised O(1) extension).
  std::mt19937 rng(11);
  SuffixAutomaton sam;
  const int n = 20000;
  for (int i = 0; i < n; ++i) sam.extend(static_cast<int32_t>(rng() % 50));
  EXPECT_LE(sam.n_states(), 2 * n);
  EXPECT_GT(sam.memory_bytes(), 0u);
}

TEST(PromptLookup, FindsTheFirstOccurrenceOfTheLongestNgram) {
  const Text text = {1, 2, 3, 9, 1, 2, 4, 5, 7, 1, 2};
  // "1 2" (the last bigram; trigram "7 1 2" never recurs) first occurs at 0: continue with 3 9 1 ...
  EXPECT_EQ(prompt_lookup(text, 3, 3), (Text{3, 9, 1}));
  EXPECT_EQ(prompt_lookup({5, 6, 7}, 3, 4), Text{});
  EXPECT_EQ(prompt_lookup({4, 4}, 3, 5), (Text{4}));
}

}  // namespace
}  // namespace sf
