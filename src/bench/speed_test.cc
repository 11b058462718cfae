#include "bench/speed_test.h"

#include <algorithm>
#include <random>

#include "base/timer.h"

namespace sf::bench {

std::string SpeedTest::name() const {
  std::string s = n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
  if (depth > 0) s += " @ d" + std::to_string(depth);
  return s;
}

std::vector<double> SpeedResult::tokens_per_second() const {
  std::vector<double> rates;
  for (double s : seconds) rates.push_back(s > 0 ? test.tokens() / s : 0.0);
  return rates;
}

double SpeedResult::median_tokens_per_second() const {
  std::vector<double> r = tokens_per_second();
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  const size_t n = r.size();
  return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

double SpeedResult::min_tokens_per_second() const {
  const std::vector<double> r = tokens_per_second();
  return r.empty() ? 0 : *std::min_element(r.begin(), r.end());
}

double SpeedResult::max_tokens_per_second() const {
  const std::vector<double> r = tokens_per_second();
  return r.empty() ? 0 : *std::max_element(r.begin(), r.end());
}

Result<std::vector<SpeedTest>> speed_tests(const std::vector<int>& prompts, const std::vector<int>& gens,
                                           const std::vector<int>& depths) {
  for (const auto* list : {&prompts, &gens, &depths})
    for (int v : *list)
      if (v < 0) return Status::Errorf("token counts must not be negative (got %d)", v);
  const std::vector<int> at = depths.empty() ? std::vector<int>{0} : depths;
  std::vector<SpeedTest> tests;
  for (int p : prompts)
    if (p > 0)
      for (int d : at) tests.push_back({p, 0, d});
  for (int g : gens)
    if (g > 0)
      for (int d : at) tests.push_back({0, g, d});
  if (tests.empty()) return Status::Error("no test to run: give a prompt (-p) or generation (-n) length above 0");
  return tests;
}

namespace {

// n random ids below n_vocab; the first is BOS when `bos` >= 0 (a sequence's start).
std::vector<int32_t> random_tokens(int n, int n_vocab, int32_t bos, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> id(0, n_vocab - 1);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = id(rng);
  if (bos >= 0 && n > 0) t[0] = bos;
  return t;
}

// One run of the test from the cache at test.depth; returns its seconds.
Result<double> run_once(Session& session, const SpeedTest& test, int32_t bos, std::mt19937& rng) {
  const int n_vocab = session.model().hparams().n_vocab;
  session.target().truncate(test.depth);
  std::vector<float> logits;
  if (test.n_prompt > 0) {
    // Generated before the clock starts: only the forward passes are timed.
    const std::vector<int32_t> prompt = random_tokens(test.n_prompt, n_vocab, test.depth == 0 ? bos : -1, rng);
    Stopwatch sw;
    SF_RETURN_IF_ERROR(session.evaluate(prompt, /*all_rows=*/false, &logits));
    return sw.elapsed();
  }
  const std::vector<int32_t> steps = random_tokens(test.n_gen, n_vocab, test.depth == 0 ? bos : -1, rng);
  Stopwatch sw;
  for (int32_t token : steps) SF_RETURN_IF_ERROR(session.evaluate({token}, /*all_rows=*/false, &logits));
  return sw.elapsed();
}

}  // namespace

Result<SpeedResult> measure_speed(Session& session, const SpeedTest& test, int repetitions, uint32_t seed) {
  if (repetitions < 1) return Status::Errorf("repetitions must be at least 1 (got %d)", repetitions);
  if ((test.n_prompt > 0) == (test.n_gen > 0) || test.depth < 0)
    return Status::Error("a speed test is either a prompt (pp) or a generation (tg) of at least one token");
  if (test.depth + test.tokens() > session.n_ctx())
    return Status::Errorf("%s needs %d tokens of context; the session has %d (use --ctx-size)", test.name().c_str(),
                          test.depth + test.tokens(), session.n_ctx());
  std::mt19937 rng(seed);
  const int32_t bos = session.tokenizer().default_add_bos() ? session.tokenizer().bos_id() : -1;
  session.reset();
  if (test.depth > 0)
    SF_RETURN_IF_ERROR(session.evaluate(random_tokens(test.depth, session.model().hparams().n_vocab, bos, rng),
                                        /*all_rows=*/false, nullptr));
  SpeedResult result;
  result.test = test;
  // One untimed run first, as llama-bench does: pages, caches and the thread pool warm up.
  SF_RETURN_IF_ERROR(run_once(session, test, bos, rng).status());
  for (int r = 0; r < repetitions; ++r) {
    session.pool().reset_usage();
    SF_ASSIGN_OR_RETURN(const double s, run_once(session, test, bos, rng));
    result.seconds.push_back(s);
    result.parallel_ops += session.pool().usage().ops;
    result.pool_wait_seconds += session.pool().usage().wait_seconds;
  }
  return result;
}

double SpeedResult::pool_wait_share() const {
  double total = 0;
  for (double s : seconds) total += s;
  return total > 0 ? pool_wait_seconds / total : 0.0;
}

}  // namespace sf::bench
