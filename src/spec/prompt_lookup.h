// Prompt lookup decoding (Saxena 2023), the n-gram baseline of retrieval drafting: the last
// n tokens of the sequence (n from max_ngram down to 1) are searched for earlier in the
// sequence, and the tokens after the first occurrence that has any are the draft.
#pragma once

#include <cstdint>
#include <vector>

namespace sf {

// Up to max_tokens draft tokens continuing `text`; empty when no n-gram recurs.
std::vector<int32_t> prompt_lookup(const std::vector<int32_t>& text, int max_ngram, int max_tokens);

}  // namespace sf
