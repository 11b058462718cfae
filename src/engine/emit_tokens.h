// Hands a verified cycle's tokens (the accepted path, then the bonus token) to the caller,
// as every speculative decoding loop does: stops at an end-of-generation token unless
// ignore_eos, when on_token returns false, or when n_predict tokens have been generated.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "spec/token_tree.h"
#include "tokenizer/tokenizer.h"

namespace sf {

// Returns true when generation is done. Emitted tokens are appended to `history` and
// counted in stats->generated_tokens.
bool emit_cycle_tokens(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus,
                       const Tokenizer& tokenizer, bool ignore_eos, int n_predict, StreamingDecoder& decoder,
                       const std::function<bool(int32_t, const std::string&)>& on_token, std::vector<int32_t>* history,
                       GenerationStats* stats);

}  // namespace sf
