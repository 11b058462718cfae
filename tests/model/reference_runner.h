// Runs a model over the prompts of a shared/reference/*.jsonl dump and measures agreement
// with llama.cpp: top-1 agreement over every prompt position, NMSE of the last-position
// logits, and whether the greedy continuation matches token for token.
#pragma once

#include <string>
#include <vector>

namespace sf::test {

struct PromptAgreement {
  int positions = 0;
  int top1_matches = 0;
  double last_logits_nmse = 0;
  int greedy_len = 0;              // reference continuation length
  int greedy_matching_prefix = 0;  // leading tokens equal to the reference
};

struct ReferenceAgreement {
  std::vector<PromptAgreement> prompts;
  double top1_rate() const;
  double max_nmse() const;
  bool greedy_identical() const;
  std::string summary() const;
};

// Loads `model_path`, evaluates each record of `jsonl_path` (tokens from the record, so the
// tokenizer is not involved) with a causal batch, then decodes greedily one token at a time.
ReferenceAgreement run_reference(const std::string& model_path, const std::string& jsonl_path, int n_threads = 2);

}  // namespace sf::test
