#include "spec/suffix_automaton.h"

#include <algorithm>

namespace sf {

SuffixAutomaton::SuffixAutomaton() { clear(); }

void SuffixAutomaton::clear() {
  states_.assign(1, State{});
  text_.clear();
  last_ = 0;
  counts_fresh_ = true;
  transitions_ = 0;
}

int32_t SuffixAutomaton::transition(int32_t state, int32_t token) const {
  const auto& next = states_[state].next;
  auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(token, INT32_MIN));
  return it != next.end() && it->first == token ? it->second : -1;
}

void SuffixAutomaton::set_transition(int32_t state, int32_t token, int32_t target) {
  auto& next = states_[state].next;
  auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(token, INT32_MIN));
  if (it != next.end() && it->first == token) {
    it->second = target;
  } else {
    next.insert(it, {token, target});
    ++transitions_;
  }
}

bool SuffixAutomaton::has_real_transition(int32_t state) const {
  const auto& next = states_[state].next;
  return !next.empty() && next.back().first != kSeparator;
}

void SuffixAutomaton::extend(int32_t token) {
  const int32_t pos = static_cast<int32_t>(text_.size());
  text_.push_back(token);
  counts_fresh_ = false;
  const int32_t cur = static_cast<int32_t>(states_.size());
  states_.push_back(State{});
  states_[cur].len = states_[last_].len + 1;
  states_[cur].first_end = pos;
  int32_t p = last_;
  while (p != -1 && transition(p, token) < 0) {
    set_transition(p, token, cur);
    p = states_[p].link;
  }
  if (p == -1) {
    states_[cur].link = 0;
  } else {
    const int32_t q = transition(p, token);
    if (states_[p].len + 1 == states_[q].len) {
      states_[cur].link = q;
    } else {
      const int32_t clone = static_cast<int32_t>(states_.size());
      State c = states_[q];  // copies transitions, link and first occurrence
      c.len = states_[p].len + 1;
      c.clone = true;
      c.count = 0;
      transitions_ += c.next.size();
      states_.push_back(std::move(c));
      while (p != -1 && transition(p, token) == q) {
        set_transition(p, token, clone);
        p = states_[p].link;
      }
      states_[q].link = clone;
      states_[cur].link = clone;
    }
  }
  last_ = cur;
}

void SuffixAutomaton::add_document(const std::vector<int32_t>& tokens) {
  for (int32_t t : tokens) extend(t);
  extend(kSeparator);
}

SuffixAutomaton::Match SuffixAutomaton::step(Match m, int32_t token) const {
  if (token == kSeparator) return {};
  int32_t v = m.state, l = m.length;
  while (true) {
    const int32_t t = transition(v, token);
    if (t >= 0) return {t, l + 1};
    if (v == 0) return {};
    v = states_[v].link;
    l = states_[v].len;
  }
}

SuffixAutomaton::Match SuffixAutomaton::continuation(Match m) const {
  while (m.state != 0 && !has_real_transition(m.state)) {
    m.state = states_[m.state].link;
    m.length = states_[m.state].len;
  }
  return m;
}

void SuffixAutomaton::refresh_counts() {
  if (counts_fresh_) return;
  // Occurrences of a state = its own end position (non-clones) + those of the states whose
  // suffix link points at it: summed over the link tree in order of decreasing length.
  const int32_t n = n_states();
  const int32_t max_len = static_cast<int32_t>(text_.size());
  std::vector<int32_t> bucket(static_cast<size_t>(max_len) + 2, 0), order(static_cast<size_t>(n));
  for (const State& s : states_) ++bucket[s.len];
  for (int32_t i = 1; i <= max_len; ++i) bucket[i] += bucket[i - 1];
  for (int32_t v = n - 1; v >= 0; --v) order[--bucket[states_[v].len]] = v;
  for (State& s : states_) s.count = s.clone ? 0 : 1;
  states_[0].count = 0;
  for (int32_t i = n - 1; i > 0; --i) {
    const State& s = states_[order[i]];
    if (s.link >= 0) states_[s.link].count += s.count;
  }
  counts_fresh_ = true;
}

void SuffixAutomaton::next_tokens(const Match& m, std::vector<std::pair<int32_t, uint32_t>>* out) {
  out->clear();
  refresh_counts();
  for (const auto& [token, target] : states_[m.state].next)
    if (token != kSeparator) out->push_back({token, states_[target].count});
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
}

uint64_t SuffixAutomaton::memory_bytes() const {
  return states_.capacity() * sizeof(State) + transitions_ * sizeof(std::pair<int32_t, int32_t>) +
         text_.capacity() * sizeof(int32_t);
}

}  // namespace sf
