// HistoryStore: past outputs of one task or app, kept on disk for retrieval drafting
// (CoordGen 2.2: outputs of similar tasks resemble earlier generations). Opt-in
// (--history-dir); one file per task name, DIR/TASK.sfhist.
//
// Bounded: at most max_tokens tokens; the oldest documents go first. Private: the file and
// a directory it creates are owner-only (0600 / 0700). Crash-safe: save() writes a
// temporary file in the same directory, fsyncs it, renames it over the store and fsyncs
// the directory, so a kill at any moment leaves either the old or the new store. Tied to
// one tokenizer: the file records a fingerprint of the vocabulary (every token's text), and
// opening it with another vocabulary is an error, as is a file that fails its checksum.
//
// File layout (little-endian): "SFHIST01", u64 vocabulary fingerprint, u64 document count,
// per document u32 length + int32 tokens, then u64 FNV-1a of all preceding bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tokenizer/tokenizer.h"

namespace sf {

struct HistoryOptions {
  std::string dir;                // empty: no store
  std::string task = "default";   // letters, digits, '-', '_', '.'
  uint64_t max_tokens = 1 << 20;  // bound on the stored tokens
  bool enabled() const { return !dir.empty(); }
};

// FNV-1a over the vocabulary size and every token's text.
uint64_t vocabulary_fingerprint(const Tokenizer& tokenizer);

class HistoryStore {
 public:
  // Opens DIR/TASK.sfhist, or starts an empty store when the file does not exist.
  // n_vocab bounds the token ids a valid file may hold.
  static Result<HistoryStore> open(const HistoryOptions& options, uint64_t fingerprint, int n_vocab);

  const std::string& path() const { return path_; }
  const std::vector<std::vector<int32_t>>& documents() const { return docs_; }
  uint64_t tokens() const { return tokens_; }
  // Appends a document (empty ones are ignored), dropping the oldest over the bound.
  void add(std::vector<int32_t> document);
  // Writes the store (see the header comment).
  Status save() const;
  // Forgets every document and removes the file.
  Status clear();

 private:
  HistoryOptions options_;
  std::string path_;
  uint64_t fingerprint_ = 0;
  std::vector<std::vector<int32_t>> docs_;
  uint64_t tokens_ = 0;
};

}  // namespace sf
