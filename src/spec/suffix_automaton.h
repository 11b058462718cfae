// SuffixAutomaton: the minimal automaton of all substrings of a token text, built online
// (Blumer et al.; the construction the CoordGen and SAM-Decoding papers use for retrieval
// drafting). Appending a token is amortised O(log sigma): O(1) new states and links, and
// transitions kept in sorted per-state vectors (binary search), so a vocabulary of 150k
// tokens costs nothing for states that see few distinct successors.
//
// A text may hold several documents (prompt, calibrated paths, reused segments, history):
// add_document() appends a separator token (kSeparator, never a real token id) after each,
// so no match crosses a document boundary and the separator is never proposed.
//
// Retrieval: step() extends a match (a state and the matched length) by one token,
// falling back along suffix links as a matcher over the automaton does, so the match is
// always the longest suffix of the queried sequence that occurs in the text. continuation()
// then finds the longest suffix of a match that is followed by at least one real token, and
// next_tokens() lists those tokens with occurrence counts: count(c) is the number of
// positions where the matched string is followed by c (|endpos| of the transition's state).
// Counts are refreshed lazily, in O(states) after the text changed (refresh_counts);
// appends never pay for them.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace sf {

class SuffixAutomaton {
 public:
  static constexpr int32_t kSeparator = -1;

  struct Match {
    int32_t state = 0;   // 0 is the root (the empty string)
    int32_t length = 0;  // tokens of the queried sequence's suffix that matched
  };

  SuffixAutomaton();
  void clear();
  // Appends one token (kSeparator allowed) to the text.
  void extend(int32_t token);
  // Appends a document and a separator after it.
  void add_document(const std::vector<int32_t>& tokens);

  const std::vector<int32_t>& text() const { return text_; }
  int32_t n_states() const { return static_cast<int32_t>(states_.size()); }
  // The state of the whole text (its longest suffix, which is the text itself).
  Match whole_text() const { return {last_, static_cast<int32_t>(text_.size())}; }

  // The match of (the queried sequence + token) from the match of the sequence.
  Match step(Match m, int32_t token) const;
  // The longest suffix of `m` that has a real (non-separator) token after some occurrence;
  // the root (length 0) if none.
  Match continuation(Match m) const;
  // Tokens following occurrences of the match's strings, with occurrence counts, by
  // descending count (ties by ascending id). Refreshes the counts first when stale.
  void next_tokens(const Match& m, std::vector<std::pair<int32_t, uint32_t>>* out);
  // End position (index into text()) of the first occurrence of the match's strings; the
  // tokens after it are one continuation (SAM-Decoding's draft).
  int32_t first_end(const Match& m) const { return states_[m.state].first_end; }

  void refresh_counts();
  // Bytes held (states, transitions, text).
  uint64_t memory_bytes() const;

 private:
  struct State {
    int32_t len = 0;
    int32_t link = -1;
    int32_t first_end = -1;
    uint32_t count = 0;
    bool clone = false;
    std::vector<std::pair<int32_t, int32_t>> next;  // (token, state), sorted by token
  };
  int32_t transition(int32_t state, int32_t token) const;
  void set_transition(int32_t state, int32_t token, int32_t target);
  bool has_real_transition(int32_t state) const;

  std::vector<State> states_;
  std::vector<int32_t> text_;
  int32_t last_ = 0;
  bool counts_fresh_ = true;
  uint64_t transitions_ = 0;
};

}  // namespace sf
