// bench/phone_regime.h on the real stories260K pair: the preset's arithmetic from measured
// steps, and its warning where the storage itself is already slower than the emulated rate.
#include <gtest/gtest.h>

#include "bench/phone_regime.h"
#include "test_paths.h"

namespace sf::bench {
namespace {

TEST(PhoneRegime, RateIsBytesPerFortyMeasuredDraftSteps) {
  SessionOptions o;
  o.model_path = test::shared_path("models/stories260K.gguf");
  o.n_threads = 2;
  auto regime = measure_phone_regime(o, test::source_path("models/stories260K-draft.gguf"));
  ASSERT_TRUE(regime.ok()) << regime.status().message();
  // Its five layers (184 KiB each) at 0%; the LM head stays resident at a share budget.
  EXPECT_GT(regime->streamed_bytes_per_pass, 900000u) << "stories260K streams ~904 KiB per pass at 0%";
  EXPECT_GT(regime->draft_step_seconds, 0);
  EXPECT_GT(regime->device_pass_seconds, 0) << "real passes at 0% were timed";
  EXPECT_NEAR(regime->io_bandwidth * kPhonePassInDraftSteps * regime->draft_step_seconds,
              static_cast<double>(regime->streamed_bytes_per_pass), 1.0);
  EXPECT_NE(regime->describe().find("EMULATED"), std::string::npos);
  // Without a draft there are no draft steps to measure in.
  EXPECT_FALSE(measure_phone_regime(o, "").ok());
}

TEST(PhoneRegime, SaysWhenTheStorageIsAlreadySlowerThanTheEmulatedRate) {
  PhoneRegime r;
  r.draft_step_seconds = 0.013e-3;
  r.streamed_bytes_per_pass = 1 << 20;
  r.io_bandwidth = (1 << 20) / (kPhonePassInDraftSteps * r.draft_step_seconds);
  r.device_pass_seconds = 0.7e-3;  // ~54 draft steps on the device alone
  EXPECT_TRUE(r.device_is_slower());
  EXPECT_NE(r.describe().find("emulation cannot make reads faster"), std::string::npos) << r.describe();
  r.device_pass_seconds = 0.2e-3;  // ~15 steps: the emulation sets the pace
  EXPECT_FALSE(r.device_is_slower());
  EXPECT_EQ(r.describe().find("cannot"), std::string::npos) << r.describe();
  EXPECT_NE(r.describe().find("own storage"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace sf::bench
