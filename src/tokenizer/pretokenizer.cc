#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <map>
#include <mutex>

#include "tokenizer/unicode.h"

namespace sf::tok {
namespace {

// The regexes are llama.cpp's (src/llama-vocab.cpp, llm_tokenizer_bpe), which in turn
// are the Hugging Face tokenizer.json pre-tokenizers, written here with two deliberate
// changes so that PCRE2 reproduces what llama.cpp actually computes:
//  - \s is the White_Space property (see expand_whitespace), as in llama.cpp's tables;
//  - llama.cpp runs regexes without \p{..} through std::wregex after replacing every
//    non-ASCII whitespace character by U+000B, so such characters never match the explicit
//    non-ASCII ranges in those regexes. The ranges below exclude them for the same effect.

constexpr const char* kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
constexpr const char* kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// CJK ideographs, U+0800..U+4E00 and Hangul, minus the whitespace in U+0800..U+4E00.
constexpr const char* kDeepseekCjk = "(?:(?!\\s)[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}])+";
// deepseek-llm's letter class: the cased letters (Lu, Ll, Lt) of the Unicode version its
// tokenizer.json was made with, as explicit ranges.
constexpr const char* kDeepseekLetters =
    "\\s?[\\x{41}-\\x{5A}\\x{61}-\\x{7A}\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}"
    "\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}"
    "\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}"
    "\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
    "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}"
    "\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}"
    "\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}"
    "\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"
    "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}"
    "\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}"
    "\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}"
    "\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}"
    "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}"
    "\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}"
    "\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}"
    "\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}"
    "\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}"
    "\\x{1E900}-\\x{1E943}]+";
// ASCII and fullwidth punctuation, curly quotes, U+3001..U+3002 (U+3000 is whitespace).
constexpr const char* kDeepseekPunct =
    "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3001}-\\x{3002}]+";
constexpr const char* kPoro = " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{0964}\\x{06D4}\\x{060C})]+";
constexpr const char* kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|"
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+"
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|"
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*"
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct Family {
  std::vector<const char*> names;
  std::vector<std::string> patterns;
};

const std::vector<Family>& families() {
  static const std::vector<Family> kFamilies = {
      {{"default", ""}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "dbrx", "smaug-bpe",
        "glm4", "chatglm-bpe"},
       {kLlama3}},
      {{"deepseek-llm"}, {"[\\r\\n]", kDeepseekLetters, kDeepseekPunct, "\\s+$", kDeepseekCjk, "\\p{N}+"}},
      {{"deepseek-coder"}, {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"}},
      {{"deepseek-v3"},
       {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?"
        "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
      {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"}, {"\\p{N}", kGpt2}},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "mpt", "olmo", "jais",
        "trillion", "roberta-bpe", "jina-v1-en", "jina-v2-code", "exaone4", "a.x-4.0", "mellum", "modern-bert"},
       {kGpt2}},
      {{"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan", "megrez", "kormo"}, {kQwen2}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {kPoro}},
      {{"viking"}, {kPoro, "\\p{N}"}},
      {{"tekken"}, {kTekken}},
      {{"gpt-4o", "llama4"}, {kGpt4o}},
      {{"chameleon"},
       {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
        "[\\p{P}!-/:-@\\[-`{-~]", kGpt2}},
  };
  return kFamilies;
}

// White_Space, spelled for use inside a character class.
constexpr const char* kWhitespaceClass =
    "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

// Rewrites \s and \S to the White_Space property. PCRE2's \s (with UCP) differs from it
// on U+180E, and llama.cpp's tables define \s as White_Space.
std::string expand_whitespace(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char n = pattern[i + 1];
      if (n == 's') {
        out += in_class ? std::string(kWhitespaceClass) : "[" + std::string(kWhitespaceClass) + "]";
      } else if (n == 'S' && !in_class) {
        out += "[^" + std::string(kWhitespaceClass) + "]";
      } else {
        out += c;
        out += n;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal in PCRE2; none of our patterns use it.
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct CodeDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};

// Per-thread JIT stack: the default 32 KiB is too small for backtracking over very long
// whitespace or digit runs; up to 8 MiB keeps such inputs on the fast path.
struct ThreadMatchContext {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ThreadMatchContext() {
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    if (context && stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadMatchContext() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
  }
};

pcre2_match_context* thread_match_context() {
  thread_local ThreadMatchContext ctx;
  return ctx.context;
}

}  // namespace

struct PreTokenizer::Compiled {
  std::string name;
  std::vector<std::string> patterns;  // as given (llama.cpp syntax)
  std::vector<std::unique_ptr<pcre2_code, CodeDeleter>> codes;
};

Result<PreTokenizer> PreTokenizer::from_patterns(std::string name, std::vector<std::string> patterns) {
  auto compiled = std::make_shared<Compiled>();
  compiled->name = std::move(name);
  for (const std::string& p : patterns) {
    const std::string expanded = expand_whitespace(p);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    // DOLLAR_ENDONLY: `$` must mean the end of the segment only, as in ECMAScript.
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expanded.data()), expanded.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error, &error_offset, nullptr);
    if (!code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(error, msg, sizeof(msg));
      return Status::Errorf("pre-tokenizer '%s': bad regex at offset %zu: %s", compiled->name.c_str(),
                            static_cast<size_t>(error_offset), reinterpret_cast<const char*>(msg));
    }
    // JIT is an optimisation only: without it (e.g. W^X policies) matching still works.
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    compiled->codes.emplace_back(code);
  }
  compiled->patterns = std::move(patterns);
  return PreTokenizer(std::move(compiled));
}

Result<PreTokenizer> PreTokenizer::for_name(const std::string& name) {
  // Compiling is not free (JIT); vocabularies loaded repeatedly share one instance.
  static std::mutex mu;
  static std::map<std::string, PreTokenizer> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  for (const Family& f : families()) {
    for (const char* n : f.names) {
      if (name == n) {
        SF_ASSIGN_OR_RETURN(PreTokenizer pre, from_patterns(name, f.patterns));
        cache.emplace(name, pre);
        return pre;
      }
    }
  }
  std::string known;
  for (const std::string& n : known_names()) known += (known.empty() ? "" : ", ") + n;
  return Status::Errorf("unknown pre-tokenizer '%s' (tokenizer.ggml.pre); supported: %s", name.c_str(), known.c_str());
}

std::vector<std::string> PreTokenizer::known_names() {
  std::vector<std::string> names;
  for (const Family& f : families()) {
    for (const char* n : f.names) {
      if (*n) names.emplace_back(n);
    }
  }
  return names;
}

const std::string& PreTokenizer::name() const { return compiled_->name; }
const std::vector<std::string>& PreTokenizer::patterns() const { return compiled_->patterns; }

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  const size_t first_piece = pieces.size();
  if (text.empty()) return;
  pcre2_match_context* mctx = thread_match_context();
  pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const auto& code : compiled_->codes) {
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code.get(), nullptr);
    next.clear();
    for (size_t s = first_piece; s < pieces.size(); ++s) {
      const std::string_view seg = pieces[s];
      // Matching against the segment alone is what makes lookaheads and `$` stop at the
      // segment boundary, as in llama.cpp.
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(seg.data());
      size_t pos = 0;
      size_t emitted = 0;
      while (pos < seg.size()) {
        int rc = pcre2_match(code.get(), subject, seg.size(), pos, PCRE2_NO_UTF_CHECK, md, mctx);
        if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
          // Resource limit in the JIT (pathological input): retry with the interpreter.
          rc = pcre2_match(code.get(), subject, seg.size(), pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, nullptr);
        }
        // No further match; after a persistent resource error the rest stays one piece,
        // which still covers the text exactly.
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t mb = ov[0];
        const size_t me = ov[1];
        if (me == mb) {
          // Empty match: emits nothing; step one character to make progress.
          pos = mb + utf8_len_from_lead(static_cast<uint8_t>(seg[mb]));
          continue;
        }
        if (mb > emitted) next.push_back(seg.substr(emitted, mb - emitted));
        next.push_back(seg.substr(mb, me - mb));
        emitted = me;
        pos = me;
      }
      if (emitted < seg.size()) next.push_back(seg.substr(emitted));
    }
    pcre2_match_data_free(md);
    pieces.resize(first_piece);
    pieces.insert(pieces.end(), next.begin(), next.end());
  }
}

}  // namespace sf::tok
