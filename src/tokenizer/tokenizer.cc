#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "base/log.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace sf {
namespace {

using tok::TokenizerImpl;

bool text_in(const std::string& s, std::initializer_list<const char*> texts) {
  for (const char* t : texts) {
    if (s == t) return true;
  }
  return false;
}

// llama.cpp finds end-of-turn and fill-in-the-middle tokens by their text when the
// metadata does not name them, and treats them as control tokens.
void detect_special_ids_by_text(TokenizerImpl& impl) {
  VocabSpec& spec = impl.spec;
  struct Rule {
    int32_t* id;
    std::initializer_list<const char*> texts;
  };
  const Rule rules[] = {
      {&spec.eot,
       {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
        "[EOT]",
        "<\xEF\xBD\x9C"
        "end\xE2\x96\x81of"
        "\xE2\x96\x81sentence\xEF\xBD\x9C>",
        "<end_of_utterance>"}},
      {&spec.eom, {"<|eom_id|>"}},
      {&spec.fim_pre,
       {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>"}},
      {&spec.fim_suf,
       {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>"}},
      {&spec.fim_mid,
       {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>"}},
      {&spec.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
      {&spec.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
      {&spec.fim_sep, {"<|file_sep|>"}},
  };
  for (const Rule& rule : rules) {
    if (*rule.id != kNoToken) continue;
    // llama.cpp scans an unordered map; take the lowest id for a deterministic choice.
    for (size_t i = 0; i < spec.tokens.size() && *rule.id == kNoToken; ++i) {
      if (text_in(spec.tokens[i].text, rule.texts)) {
        *rule.id = static_cast<int32_t>(i);
        spec.tokens[i].attr |= kAttrControl;
      }
    }
  }
}

void build_eog_set(TokenizerImpl& impl) {
  VocabSpec& spec = impl.spec;
  std::vector<int32_t> eog;
  for (int32_t id : {spec.fim_pad, spec.fim_rep, spec.fim_sep, spec.eos, spec.eot, spec.eom}) {
    if (id != kNoToken) eog.push_back(id);
  }
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    VocabToken& t = spec.tokens[i];
    if (text_in(t.text, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
                         "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>"})) {
      eog.push_back(static_cast<int32_t>(i));
      t.attr |= kAttrControl;
    }
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  impl.eog_ids = std::move(eog);
}

std::string render_piece(const TokenizerImpl& impl, const VocabToken& t) {
  if (t.attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return t.text;
  if (t.attr & kAttrByte) {
    // "<0xXX>"
    unsigned value = 0;
    if (t.text.size() == 6 && std::sscanf(t.text.c_str(), "<0x%2X>", &value) == 1) {
      return std::string(1, static_cast<char>(value));
    }
    return "";
  }
  if (!(t.attr & kAttrNormal)) return "";  // unused/undefined tokens render as nothing
  if (impl.spec.type == VocabType::kBpe) {
    std::string out;
    for (size_t pos = 0; pos < t.text.size();) {
      const size_t start = pos;
      const uint32_t cp = tok::decode_utf8(t.text, pos);
      const int byte = tok::unicode_to_byte(cp);
      if (byte >= 0) {
        out.push_back(static_cast<char>(byte));
      } else {
        // Not in the byte alphabet (llama.cpp prints an [UNK_BYTE_..] marker): keep the
        // character itself, which is what the token visibly means.
        out.append(t.text, start, std::min(pos, t.text.size()) - start);
      }
    }
    return out;
  }
  std::string out;
  for (size_t i = 0; i < t.text.size(); ++i) {
    if (t.text.compare(i, 3, "\xE2\x96\x81") == 0) {
      out.push_back(' ');
      i += 2;
    } else {
      out.push_back(t.text[i]);
    }
  }
  return out;
}

}  // namespace

Result<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& file) {
  SF_ASSIGN_OR_RETURN(VocabSpec spec, read_vocab_spec(file));
  auto result = from_spec(std::move(spec));
  if (!result.ok()) return result.status().with_context(file.path());
  return result;
}

Result<Tokenizer> Tokenizer::from_spec(VocabSpec spec) {
  if (spec.tokens.empty()) return Status::Error("the vocabulary is empty");
  auto impl = std::make_shared<TokenizerImpl>();
  impl->spec = std::move(spec);
  VocabSpec& s = impl->spec;
  const auto n = static_cast<int32_t>(s.tokens.size());

  for (int32_t i = 0; i < n; ++i) {
    VocabToken& t = s.tokens[static_cast<size_t>(i)];
    if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp
    impl->max_token_len = std::max(impl->max_token_len, t.text.size());
  }
  // The index points into s.tokens, whose texts do not change from here on.
  impl->token_index.build(&s.tokens);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t previous = impl->token_index.insert(i);
    if (previous != kNoToken) {
      return Status::Errorf("duplicate token in vocabulary: '%s' has ids %d and %d",
                            s.tokens[static_cast<size_t>(i)].text.c_str(), previous, i);
    }
  }
  for (int32_t* id : {&s.bos, &s.eos, &s.eot, &s.eom, &s.unk, &s.sep, &s.pad, &s.mask, &s.fim_pre, &s.fim_suf,
                      &s.fim_mid, &s.fim_pad, &s.fim_rep, &s.fim_sep}) {
    if (*id < kNoToken || *id >= n) *id = kNoToken;
  }
  if (s.add_bos && s.bos == kNoToken) s.add_bos = false;
  if (s.add_eos && s.eos == kNoToken) s.add_eos = false;

  detect_special_ids_by_text(*impl);
  build_eog_set(*impl);

  for (int32_t i = 0; i < n; ++i) {
    if (s.tokens[static_cast<size_t>(i)].attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      impl->special_tokens.push_back(i);
    }
  }
  std::stable_sort(impl->special_tokens.begin(), impl->special_tokens.end(), [&](int32_t a, int32_t b) {
    return s.tokens[static_cast<size_t>(a)].text.size() > s.tokens[static_cast<size_t>(b)].text.size();
  });
  for (int32_t id : impl->special_tokens) {
    impl->special_trie.insert(s.tokens[static_cast<size_t>(id)].text, id);
  }
  // Phi-3's special tokens swallow the whitespace after them (llama.cpp keys this on the
  // model name, as the GGUF has no per-token strip attributes).
  std::string lower_name = s.model_name;
  for (char& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower_name.find("phi-3") != std::string::npos || lower_name.find("phi3") != std::string::npos) {
    for (int32_t id : impl->special_tokens) s.tokens[static_cast<size_t>(id)].attr |= kAttrRstrip;
    auto set_rstrip = [&](const char* text, bool on) {
      const int32_t id = impl->find_token(text);
      if (id == kNoToken) return;
      uint32_t& attr = s.tokens[static_cast<size_t>(id)].attr;
      attr = on ? (attr | kAttrRstrip) : (attr & ~kAttrRstrip);
    };
    set_rstrip("</s>", true);
    for (const char* t : {"<unk>", "<s>", "<|endoftext|>"}) set_rstrip(t, false);
  }

  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    int32_t id = impl->find_token(hex);
    if (id == kNoToken) id = impl->find_token(std::string(1, static_cast<char>(b)));
    impl->byte_tokens[b] = id;
  }
  if (s.type == VocabType::kSpm) {
    impl->spm_words_independent = true;
    for (const VocabToken& t : s.tokens) {
      for (size_t p = t.text.find("\xE2\x96\x81", 1); p != std::string::npos; p = t.text.find("\xE2\x96\x81", p + 3)) {
        if (p < 3 || t.text.compare(p - 3, 3, "\xE2\x96\x81") != 0) {
          impl->spm_words_independent = false;
          break;
        }
      }
      if (!impl->spm_words_independent) break;
    }
  }
  if (s.type == VocabType::kBpe) {
    std::string pre = s.pre;
    if (pre.empty()) {
      SF_LOG_WARN(
          "tokenizer: BPE vocabulary without tokenizer.ggml.pre; using llama.cpp's "
          "'default' pre-tokenizer (tokenization may differ from the original model)");
      pre = "default";
    }
    SF_ASSIGN_OR_RETURN(tok::PreTokenizer pre_tokenizer, tok::PreTokenizer::for_name(pre));
    impl->pre_tokenizer = std::move(pre_tokenizer);
    tok::build_bpe_tables(*impl);
  }

  impl->pieces.reserve(s.tokens.size());
  impl->piece_is_special.reserve(s.tokens.size());
  for (const VocabToken& t : s.tokens) {
    impl->pieces.push_back(render_piece(*impl, t));
    impl->piece_is_special.push_back((t.attr & (kAttrControl | kAttrUnknown)) ? 1 : 0);
  }
  return Tokenizer(std::move(impl));
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const size_t bad = tok::find_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    return Status::Errorf("input is not valid UTF-8 (byte 0x%02X at offset %zu)",
                          static_cast<unsigned>(static_cast<uint8_t>(text[bad])), bad);
  }
  const TokenizerImpl& impl = *impl_;
  const VocabSpec& s = impl.spec;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  const bool add_bos = add_special && (s.add_bos || s.type == VocabType::kWpm);
  if (add_bos && s.bos != kNoToken) out.push_back(s.bos);

  // SPM puts a space prefix before a text fragment at the start and after special tokens.
  bool after_special = true;
  for (const tok::Fragment& f : tok::split_special_tokens(impl, text, parse_special)) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    switch (s.type) {
      case VocabType::kSpm:
        tok::spm_encode(impl, f.text, s.add_space_prefix && after_special, out);
        break;
      case VocabType::kBpe:
        tok::bpe_encode(impl, f.text, out);
        break;
      case VocabType::kWpm:
        tok::wpm_encode(impl, f.text, out);
        break;
    }
    after_special = false;
  }
  if (add_special) {
    if (s.type == VocabType::kWpm) {
      if (s.sep != kNoToken) out.push_back(s.sep);
    } else if (s.add_eos) {
      out.push_back(s.eos);
    }
  }
  return out;
}

bool Tokenizer::default_add_bos() const { return impl_->spec.add_bos; }
bool Tokenizer::default_add_eos() const { return impl_->spec.add_eos; }

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (!is_valid(id)) return "";
  const auto i = static_cast<size_t>(id);
  if (impl_->piece_is_special[i] && !render_special) return "";
  return impl_->pieces[i];
}

Result<std::string> Tokenizer::decode(const std::vector<int32_t>& ids) const { return decode(ids, DecodeOptions{}); }

Result<std::string> Tokenizer::decode(const std::vector<int32_t>& ids, const DecodeOptions& options) const {
  const TokenizerImpl& impl = *impl_;
  const bool strip = options.strip_space_prefix && impl.spec.add_space_prefix;
  std::string out;
  bool strip_next = strip;
  for (size_t k = 0; k < ids.size(); ++k) {
    const int32_t id = ids[k];
    if (!is_valid(id)) {
      return Status::Errorf(
          "token id %d at position %zu is out of range (the vocabulary has %d "
          "tokens)",
          id, k, n_vocab());
    }
    const auto i = static_cast<size_t>(id);
    const uint32_t attr = impl.spec.tokens[i].attr;
    if (attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      if (!impl.piece_is_special[i] || options.render_special) out += impl.pieces[i];
      strip_next = strip;  // the encoder adds a space prefix after a special token
      continue;
    }
    const std::string& piece = impl.pieces[i];
    if (strip_next && (attr & kAttrNormal) && !piece.empty() && piece[0] == ' ') {
      out.append(piece, 1);
    } else {
      out += piece;
    }
    strip_next = false;
  }
  return out;
}

int32_t Tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->spec.tokens.size()); }
int32_t Tokenizer::bos_id() const { return impl_->spec.bos; }
int32_t Tokenizer::eos_id() const { return impl_->spec.eos; }
int32_t Tokenizer::eot_id() const { return impl_->spec.eot; }
int32_t Tokenizer::unk_id() const { return impl_->spec.unk; }

bool Tokenizer::is_eog(int32_t id) const {
  return std::binary_search(impl_->eog_ids.begin(), impl_->eog_ids.end(), id);
}

bool Tokenizer::is_control(int32_t id) const { return is_valid(id) && (impl_->attr(id) & kAttrControl); }

const std::vector<int32_t>& Tokenizer::eog_ids() const { return impl_->eog_ids; }

const std::string& Tokenizer::token_text(int32_t id) const {
  static const std::string kEmpty;
  return is_valid(id) ? impl_->spec.tokens[static_cast<size_t>(id)].text : kEmpty;
}

uint32_t Tokenizer::token_attr(int32_t id) const { return is_valid(id) ? impl_->attr(id) : 0; }

int32_t Tokenizer::find_token(std::string_view text) const { return impl_->find_token(text); }

VocabType Tokenizer::type() const { return impl_->spec.type; }

const std::string& Tokenizer::pre_tokenizer_name() const {
  static const std::string kNone;
  return impl_->pre_tokenizer ? impl_->pre_tokenizer->name() : kNone;
}

const VocabSpec& Tokenizer::spec() const { return impl_->spec; }

bool Tokenizer::same_vocabulary(const Tokenizer& other) const {
  if (impl_ == other.impl_) return true;
  const VocabSpec& a = impl_->spec;
  const VocabSpec& b = other.impl_->spec;
  if (a.type != b.type || a.tokens.size() != b.tokens.size()) return false;
  // Strip attributes are derived from the model name, not from the vocabulary.
  constexpr uint32_t kTypeBits = ~(kAttrLstrip | kAttrRstrip);
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    if (a.tokens[i].text != b.tokens[i].text) return false;
    if ((a.tokens[i].attr & kTypeBits) != (b.tokens[i].attr & kTypeBits)) return false;
  }
  return true;
}

}  // namespace sf
