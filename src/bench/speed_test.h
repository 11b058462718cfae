// llama-bench's measurements on a Session, so specflash and llama.cpp can be timed side by
// side on the same GGUF file (`specflash speed`, scripts/llama_cpp_side_by_side.sh):
//
//   ppN  one prompt of N random tokens from an empty context, evaluated the way a prefill
//        is (Session::evaluate: chunks of the session's max_batch rows, logits of the
//        last row only);
//   tgN  N single-token steps, each with its logits, the way plain decoding runs;
//   @ dD either test after D random tokens of context. The context is computed once,
//        untimed, and each repetition truncates the cache back to it (llama-bench keeps
//        the state at a depth and restores it, so it too times only the test).
//
// Tokens are random ids (the first one BOS when the vocabulary adds it): speed does not
// depend on which tokens they are, and no sampling is timed. One untimed run of the test
// warms caches and pages before the timed repetitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/session.h"

namespace sf::bench {

struct SpeedTest {
  int n_prompt = 0;  // ppN when > 0 (then n_gen is 0)
  int n_gen = 0;     // tgN when > 0 (then n_prompt is 0)
  int depth = 0;     // tokens of context before the test
  // llama-bench's names: "pp512", "tg64", "tg64 @ d2048".
  std::string name() const;
  int tokens() const { return n_prompt + n_gen; }
};

struct SpeedResult {
  SpeedTest test;
  std::vector<double> seconds;  // one per timed repetition, in run order
  // Over the timed repetitions: the pool's parallel ops and the seconds its calling thread
  // waited at their ends for the other threads (ThreadPool::Usage).
  uint64_t parallel_ops = 0;
  double pool_wait_seconds = 0;
  // pool_wait_seconds as a share of the timed seconds: how long one core sat idle.
  double pool_wait_share() const;
  // tokens / seconds of each repetition, and their median, minimum and maximum.
  std::vector<double> tokens_per_second() const;
  double median_tokens_per_second() const;
  double min_tokens_per_second() const;
  double max_tokens_per_second() const;
};

// The tests "pp" x prompts, then "tg" x gens, each at every depth (llama-bench's order).
// Zero entries are skipped (llama-bench's `-p 0`); negative ones are an error.
Result<std::vector<SpeedTest>> speed_tests(const std::vector<int>& prompts, const std::vector<int>& gens,
                                           const std::vector<int>& depths);

// Runs one test `repetitions` times (>= 1) after one untimed warm-up. Errors when the
// session's context cannot hold depth + tokens. Leaves the session's cache at depth +
// tokens of random ids (reset() it before generating text).
Result<SpeedResult> measure_speed(Session& session, const SpeedTest& test, int repetitions, uint32_t seed);

}  // namespace sf::bench
