#include "base/log.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TEST(LogOnce, AMessageAlreadyLoggedIsDropped) {
  testing::internal::CaptureStderr();
  EXPECT_TRUE(log_message_once(LogLevel::kWarn, "footprint at %s", "0%"));
  EXPECT_FALSE(log_message_once(LogLevel::kWarn, "footprint at %s", "0%"));
  EXPECT_TRUE(log_message_once(LogLevel::kWarn, "footprint at %s", "25%"));  // other text
  EXPECT_TRUE(log_message_once(LogLevel::kError, "footprint at %s", "0%"));  // other level
  // Plain messages are never deduplicated.
  log_message(LogLevel::kWarn, "footprint at %s", "0%");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "warning: footprint at 0%\nwarning: footprint at 25%\nerror: footprint at 0%\nwarning: footprint at 0%\n");
}

TEST(LogOnce, AMessageBelowTheLevelIsNotRememberedAsSaid) {
  const LogLevel before = log_level();
  set_log_level(LogLevel::kError);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(log_message_once(LogLevel::kWarn, "quiet at first"));
  set_log_level(LogLevel::kWarn);
  EXPECT_TRUE(log_message_once(LogLevel::kWarn, "quiet at first"));
  set_log_level(before);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "warning: quiet at first\n");
}

}  // namespace
}  // namespace sf
