#include "engine/emit_tokens.h"

namespace sf {

bool emit_cycle_tokens(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus,
                       const Tokenizer& tokenizer, bool ignore_eos, int n_predict, StreamingDecoder& decoder,
                       const std::function<bool(int32_t, const std::string&)>& on_token, std::vector<int32_t>* history,
                       GenerationStats* stats) {
  // The accepted nodes' tokens, then the bonus.
  for (size_t i = 0; i <= accepted.size(); ++i) {
    const int32_t token = i < accepted.size() ? tree.node(accepted[i]).token : bonus;
    if (!ignore_eos && tokenizer.is_eog(token)) return true;
    history->push_back(token);
    ++stats->generated_tokens;
    if (!on_token(token, decoder.push(token)) || stats->generated_tokens >= n_predict) return true;
  }
  return false;
}

}  // namespace sf
