#include "engine/emit_tokens.h"

namespace sf {

bool emit_cycle_tokens(const TokenTree& tree, const std::vector<int32_t>& accepted, int32_t bonus,
                       const Tokenizer& tokenizer, bool ignore_eos, int n_predict, StreamingDecoder& decoder,
                       const std::function<bool(int32_t, const std::string&)>& on_token, std::vector<int32_t>* history,
                       GenerationStats* stats) {
  std::vector<int32_t> emitted;
  for (int32_t node : accepted) emitted.push_back(tree.node(node).token);
  emitted.push_back(bonus);
  for (int32_t token : emitted) {
    if (!ignore_eos && tokenizer.is_eog(token)) return true;
    history->push_back(token);
    ++stats->generated_tokens;
    if (!on_token(token, decoder.push(token)) || stats->generated_tokens >= n_predict) return true;
  }
  return false;
}

}  // namespace sf
