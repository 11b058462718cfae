#include "tokenizer/vocab.h"

#include <algorithm>

namespace sf {

const char* vocab_type_name(VocabType type) {
  switch (type) {
    case VocabType::kSpm:
      return "SPM";
    case VocabType::kBpe:
      return "BPE";
    case VocabType::kWpm:
      return "WPM";
  }
  return "?";
}

namespace {

uint32_t attr_from_token_type(int64_t type) {
  switch (type) {
    case 1:
      return kAttrNormal;
    case 2:
      return kAttrUnknown;
    case 3:
      return kAttrControl;
    case 4:
      return kAttrUserDefined;
    case 5:
      return kAttrUnused;
    case 6:
      return kAttrByte;
    default:
      return kAttrUndefined;
  }
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

}  // namespace

Result<VocabSpec> read_vocab_spec(const gguf::GgufFile& file) {
  const std::string& path = file.path();
  VocabSpec spec;
  const auto model = file.get_string("tokenizer.ggml.model");
  if (!model) {
    return Status::Errorf("%s: no tokenizer in this file (tokenizer.ggml.model is missing)", path.c_str());
  }
  spec.model = *model;
  spec.pre = file.get_string("tokenizer.ggml.pre").value_or("");
  spec.model_name = file.get_string("general.name").value_or("");
  spec.chat_template = file.get_string("tokenizer.chat_template").value_or("");

  if (spec.model == "llama") {
    spec.type = VocabType::kSpm;
    spec.bos = 1;
    spec.eos = 2;
    spec.unk = 0;
    spec.add_bos = true;
    spec.add_space_prefix = true;
  } else if (spec.model == "gpt2") {
    spec.type = VocabType::kBpe;
    spec.bos = 11;
    spec.eos = 11;
    if (one_of(spec.pre,
               {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "tekken"})) {
      spec.ignore_merges = true;
      spec.add_bos = true;
    }
    if (spec.pre == "chameleon") spec.add_bos = true;
    if (one_of(spec.pre, {"glm4", "chatglm-bpe"})) spec.bos = kNoToken;
    if (one_of(spec.pre, {"jina-v1-en", "jina-v2-code", "roberta-bpe"})) spec.add_sep = true;
  } else if (spec.model == "bert") {
    spec.type = VocabType::kWpm;
    spec.bos = 101;
    spec.unk = 100;
    spec.sep = 102;
    spec.pad = 0;
    spec.mask = 103;
    spec.add_bos = true;
    spec.add_sep = true;
  } else {
    return Status::Errorf("%s: unsupported tokenizer model '%s' (supported: llama (SPM), gpt2 (BPE), bert (WPM))",
                          path.c_str(), spec.model.c_str());
  }
  if (auto v = file.get_bool("tokenizer.ggml.add_space_prefix")) spec.add_space_prefix = *v;

  const auto tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (!tokens) {
    return Status::Errorf("%s: tokenizer.ggml.tokens is missing or not a string array", path.c_str());
  }
  if (tokens->empty()) {
    return Status::Errorf("%s: the vocabulary is empty (tokenizer.ggml.tokens has no entries)", path.c_str());
  }
  const size_t n = tokens->size();
  spec.tokens.resize(n);
  for (size_t i = 0; i < n; ++i) spec.tokens[i].text = (*tokens)[i];

  if (file.has("tokenizer.ggml.scores")) {
    const auto scores = file.get_float_array("tokenizer.ggml.scores");
    if (!scores || scores->size() < n) {
      return Status::Errorf("%s: tokenizer.ggml.scores has %zu entries for %zu tokens", path.c_str(),
                            scores ? scores->size() : size_t{0}, n);
    }
    for (size_t i = 0; i < n; ++i) spec.tokens[i].score = (*scores)[i];
  }
  if (file.has("tokenizer.ggml.token_type")) {
    const auto types = file.get_int_array("tokenizer.ggml.token_type");
    if (!types || types->size() < n) {
      return Status::Errorf("%s: tokenizer.ggml.token_type has %zu entries for %zu tokens", path.c_str(),
                            types ? types->size() : size_t{0}, n);
    }
    for (size_t i = 0; i < n; ++i) spec.tokens[i].attr = attr_from_token_type((*types)[i]);
  }
  if (spec.type == VocabType::kBpe) {
    const auto merges = file.get_string_array("tokenizer.ggml.merges");
    if (!merges) {
      return Status::Errorf("%s: BPE vocabulary without tokenizer.ggml.merges", path.c_str());
    }
    spec.merges = *merges;
  }

  const int64_t n_tokens = static_cast<int64_t>(n);
  auto read_id = [&](const char* key, int32_t& id) {
    if (id >= n_tokens) id = kNoToken;  // a default that does not exist in this vocabulary
    const auto v = file.get_int(key);
    if (v && *v >= 0 && *v < n_tokens) id = static_cast<int32_t>(*v);
  };
  read_id("tokenizer.ggml.bos_token_id", spec.bos);
  read_id("tokenizer.ggml.eos_token_id", spec.eos);
  read_id("tokenizer.ggml.eot_token_id", spec.eot);
  read_id("tokenizer.ggml.eom_token_id", spec.eom);
  read_id("tokenizer.ggml.unknown_token_id", spec.unk);
  read_id("tokenizer.ggml.seperator_token_id", spec.sep);
  read_id("tokenizer.ggml.padding_token_id", spec.pad);
  read_id("tokenizer.ggml.mask_token_id", spec.mask);
  read_id("tokenizer.ggml.fim_pre_token_id", spec.fim_pre);
  read_id("tokenizer.ggml.fim_suf_token_id", spec.fim_suf);
  read_id("tokenizer.ggml.fim_mid_token_id", spec.fim_mid);
  read_id("tokenizer.ggml.fim_pad_token_id", spec.fim_pad);
  read_id("tokenizer.ggml.fim_rep_token_id", spec.fim_rep);
  read_id("tokenizer.ggml.fim_sep_token_id", spec.fim_sep);
  // Deprecated spellings of the FIM keys.
  read_id("tokenizer.ggml.prefix_token_id", spec.fim_pre);
  read_id("tokenizer.ggml.suffix_token_id", spec.fim_suf);
  read_id("tokenizer.ggml.middle_token_id", spec.fim_mid);

  if (auto v = file.get_bool("tokenizer.ggml.add_bos_token")) spec.add_bos = *v;
  if (auto v = file.get_bool("tokenizer.ggml.add_eos_token")) spec.add_eos = *v;
  if (auto v = file.get_bool("tokenizer.ggml.add_sep_token")) spec.add_sep = *v;
  if (auto v = file.get_bool("tokenizer.ggml.normalizer.lowercase")) {
    spec.lowercase = *v;
    spec.strip_accents = *v;
  }
  if (auto v = file.get_bool("tokenizer.ggml.normalizer.strip_accents")) spec.strip_accents = *v;

  if (spec.add_bos && spec.bos == kNoToken) {
    return Status::Errorf("%s: tokenizer.ggml.add_bos_token is true but there is no BOS token", path.c_str());
  }
  if (spec.add_eos && spec.eos == kNoToken) {
    return Status::Errorf("%s: tokenizer.ggml.add_eos_token is true but there is no EOS token", path.c_str());
  }
  return spec;
}

}  // namespace sf
