// The entry points the fuzz targets drive (fuzz/*.cc, built with -DSPECFLASH_FUZZ=ON) and
// the regression test replays (robustness_corpus_test.cc, the normal build). Keeping them
// in one place means a crash the fuzzer found is replayed through exactly the code that
// found it.
//
// Each function feeds one input to real parsing code and returns for every input: a
// rejected input is an expected result (an error Status or ApiError), while a crash, a
// sanitizer report, a hang or a broken invariant (FUZZ_INVARIANT, which aborts) is a bug.
//
// init() must run once before any target: it loads the tokenizers and the target model the
// targets compare against. Inputs are written to a memfd when the code under test wants a
// file path, so fuzzing never touches the disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sf::fuzz {

// source_dir: the repository (for models/); shared_dir: the shared/ folder (vocabularies;
// may be missing, then only the repository's models are used).
void init(const std::string& source_dir, const std::string& shared_dir);

// Names of the vocabularies init() loaded, in the order the tokenizer target indexes them.
const std::vector<std::string>& loaded_vocabularies();

// GGUF reader: header, metadata (every typed lookup), tensor index, data offsets and the
// bytes of small tensors; then the tokenizer and hyper-parameter readers on the result.
void gguf_reader(const uint8_t* data, size_t size);
// Tokenizer: byte 0 picks a vocabulary, byte 1 the mode and flags; the rest is text to
// encode (add_special / parse_special from the flags) or little-endian int32 ids to decode
// (plain, with every DecodeOptions, token_to_piece, and the streaming decoder).
void tokenizer(const uint8_t* data, size_t size);
// Chat formatting (src/cli/chat_format, tokenizer/chat_template): parts separated by NUL.
// Part 0 is a template name or a Jinja text to detect; byte 0 of it also picks the
// vocabulary. Every later part is one message, "role\ncontent". The rendered prompt is then
// tokenized with parse_special, as `specflash chat` and the server do.
void chat_format(const uint8_t* data, size_t size);
// The server's request parser: byte 0 picks the endpoint (even: chat), the rest is the body.
void completion_request(const uint8_t* data, size_t size);
// The draft/target compatibility check: the input is a draft GGUF, loaded with
// DraftModelDrafter::create against the stories260K target.
void draft_compat(const uint8_t* data, size_t size);

}  // namespace sf::fuzz

// An invariant of a successful result (not an input check): prints and aborts, so the
// fuzzer records it as a crash.
#define FUZZ_INVARIANT(cond, what)                                                           \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
