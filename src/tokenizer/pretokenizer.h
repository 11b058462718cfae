// Pre-tokenizers of byte-level BPE vocabularies: the regexes named by `tokenizer.ggml.pre`
// that cut text into words before BPE merges run inside each word.
//
// Semantics follow llama.cpp's unicode_regex_split: the regexes of a pre-tokenizer are
// applied one after another; each one splits every current segment into its matches and
// the unmatched gaps between them (both kept), and its lookaheads and `$` see only the
// segment, never the text beyond it. Unicode classes (\p{L}, \p{N}, \p{P}, ...) are real
// Unicode general categories, evaluated by PCRE2 in UTF+UCP mode (JIT-compiled when
// available); \s and \S mean the Unicode White_Space property.
//
// A PreTokenizer is immutable and safe to use from several threads at once (each split()
// call uses its own match data). Copies share the compiled patterns.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sf::tok {

class PreTokenizer {
 public:
  // The pre-tokenizer llama.cpp uses for `tokenizer.ggml.pre` == name ("gpt-2",
  // "llama-bpe", "qwen2", ...); "" or "default" is llama.cpp's fallback set. An unknown
  // name is an error that lists what is supported.
  static Result<PreTokenizer> for_name(const std::string& name);
  // A pre-tokenizer from explicit regexes (llama.cpp syntax: \s/\S as above). For tests.
  static Result<PreTokenizer> from_patterns(std::string name, std::vector<std::string> patterns);

  // Names accepted by for_name(), for help texts and errors.
  static std::vector<std::string> known_names();

  // Splits `text` (valid UTF-8) into consecutive non-empty pieces that cover it exactly.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  const std::string& name() const;
  const std::vector<std::string>& patterns() const;

 private:
  struct Compiled;
  explicit PreTokenizer(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace sf::tok
