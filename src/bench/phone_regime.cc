#include "bench/phone_regime.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "weights/memory_budget.h"

namespace sf::bench {

std::string PhoneRegime::describe() const {
  char buf[1024];
  int n = std::snprintf(
      buf, sizeof(buf),
      "scaled phone regime: storage EMULATED at %.1f MB/s = %s streamed per target pass at 0%% / (%.0f x "
      "%.3f ms, the draft's measured decoding step), so one target pass at 0%% costs ~%.0f draft steps, as an "
      "8B Q4_0 target on UFS 4.0 does against a ~0.5B draft",
      io_bandwidth / 1e6, format_bytes(streamed_bytes_per_pass).c_str(), kPhonePassInDraftSteps,
      1e3 * draft_step_seconds, kPhonePassInDraftSteps);
  if (device_pass_seconds > 0 && n > 0 && static_cast<size_t>(n) < sizeof(buf)) {
    const double steps = draft_step_seconds > 0 ? device_pass_seconds / draft_step_seconds : 0;
    std::snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n),
                  device_is_slower()
                      ? "; BUT this machine's own storage already takes %.2f ms per pass at 0%% (~%.0f draft steps, "
                        "measured without emulation): emulation cannot make reads faster, so these rows run at "
                        "the storage's own speed, not at the emulated rate"
                      : " (this machine's own storage: %.2f ms per pass at 0%%, ~%.0f draft steps)",
                  1e3 * device_pass_seconds, steps);
  }
  return buf;
}

namespace {
// Below this, a pass at 0% is cheap enough to time over ~160 passes instead of 4.
constexpr double kQuickPassSeconds = 0.02;

// Seconds per decoding step of `session` (greedy, from a short prompt; the prefill is not
// counted): the median of `runs` generations of `tokens` tokens, 0 if none could be timed.
Result<double> median_decode_step(Session& session, int runs, int tokens) {
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> prompt, session.tokenize("Once upon a time"));
  SamplingParams greedy;
  greedy.temperature = 0;
  const auto ignore = [](int32_t, const std::string&) { return true; };
  std::vector<double> steps;
  for (int i = 0; i < runs; ++i) {
    SF_ASSIGN_OR_RETURN(const GenerationStats st,
                        session.generate(prompt, tokens, greedy, /*ignore_eos=*/true, ignore));
    if (st.decode_tokens() > 0) steps.push_back(st.decode_seconds / st.decode_tokens());
  }
  if (steps.empty()) return 0.0;
  std::sort(steps.begin(), steps.end());
  return steps[steps.size() / 2];
}
}  // namespace

Result<PhoneRegime> measure_phone_regime(const SessionOptions& base, const std::string& draft_path) {
  if (draft_path.empty())
    return Status::Error("--preset phone measures the regime in draft steps: it needs a draft model (--draft)");
  PhoneRegime regime;
  {
    SessionOptions o = base;
    o.spec = SpecConfig{};
    o.mem_budget = *MemoryBudget::parse("0%");
    o.io_bandwidth = 0;
    SF_ASSIGN_OR_RETURN(auto target, Session::create(o));
    regime.streamed_bytes_per_pass = target->plan().streamed_bytes_per_pass;
    // One run of four real decode passes: few, because a big target's pass at 0% takes
    // seconds. Where a pass is quick, the median of five longer runs: one short run on a
    // shared virtual disk came out at 0.54 ms a pass where the bench's own runs took ~0.9.
    if (regime.streamed_bytes_per_pass > 0) {
      SF_ASSIGN_OR_RETURN(regime.device_pass_seconds, median_decode_step(*target, 1, 5));
      if (regime.device_pass_seconds > 0 && regime.device_pass_seconds < kQuickPassSeconds) {
        SF_ASSIGN_OR_RETURN(regime.device_pass_seconds, median_decode_step(*target, 5, 33));
      }
    }
  }
  if (regime.streamed_bytes_per_pass == 0) return Status::Error("the target streams nothing at 0%: no phone regime");
  SessionOptions o = base;
  o.model_path = draft_path;
  o.spec = SpecConfig{};
  o.mem_budget = MemoryBudget{};
  o.io_bandwidth = 0;
  SF_ASSIGN_OR_RETURN(auto draft, Session::create(o));
  // The median of a few short runs: one run on a shared machine can be off by 2x.
  SF_ASSIGN_OR_RETURN(regime.draft_step_seconds, median_decode_step(*draft, 5, 33));
  if (regime.draft_step_seconds <= 0) return Status::Error("could not time the draft's decoding step");
  regime.io_bandwidth =
      static_cast<double>(regime.streamed_bytes_per_pass) / (kPhonePassInDraftSteps * regime.draft_step_seconds);
  return regime;
}

}  // namespace sf::bench
