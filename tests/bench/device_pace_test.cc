// Emulated storage that was not really emulated: runs whose own device delivered less than
// the emulated rate are counted, the device's rate is pooled over every streamed run, and
// the note names both; nothing is said where the emulation held or nothing is emulated.
#include "bench/device_pace.h"

#include <gtest/gtest.h>

namespace sf::bench {
namespace {

// A run of one prompt that read `bytes` while its device was busy for `device_seconds`.
RunResult streamed_run(uint64_t bytes, double device_seconds) {
  RunResult run{BenchMethod::kFlashAr, {"0%", *MemoryBudget::parse("0%")}, {}, {}};
  PromptRun pr;
  pr.stats.counters.stream.bytes_read = bytes;
  pr.stats.counters.stream.device_seconds = device_seconds;
  run.prompts = {pr, pr};  // two prompts: the run's rate pools them
  return run;
}

TEST(DevicePace, CountsTheRunsWhoseDeviceWasSlowerThanTheEmulatedRate) {
  BenchResult result;
  result.runs = {streamed_run(0, 0),               // resident: not a streamed run
                 streamed_run(1'000'000, 0.001),   // 1 GB/s
                 streamed_run(3'000'000, 0.001),   // 3 GB/s
                 streamed_run(5'000'000, 0.001)};  // 5 GB/s
  const DevicePace pace = measure_device_pace(result, 4e9);
  EXPECT_EQ(pace.streamed_runs, 3);
  EXPECT_EQ(pace.runs_below_emulated, 2);
  EXPECT_DOUBLE_EQ(pace.device_bytes_per_s, 18e6 / 0.006) << "bytes over busy time, every prompt of every run";

  const auto note = device_pace_note(pace, 4e9);
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("EMULATED at 4.00 GB/s"), std::string::npos) << *note;
  EXPECT_NE(note->find("delivered 3.00 GB/s"), std::string::npos) << *note;
  EXPECT_NE(note->find("2 of 3 streamed runs"), std::string::npos) << *note;
}

TEST(DevicePace, SaysNothingWhereTheEmulationHeldOrNothingIsEmulated) {
  BenchResult result;
  result.runs = {streamed_run(5'000'000, 0.001), streamed_run(6'000'000, 0.001)};
  const DevicePace held = measure_device_pace(result, 4e9);
  EXPECT_EQ(held.runs_below_emulated, 0);
  EXPECT_FALSE(device_pace_note(held, 4e9).has_value());

  const DevicePace real = measure_device_pace(result, 0);  // the real device: nothing to compare
  EXPECT_EQ(real.streamed_runs, 2);
  EXPECT_EQ(real.runs_below_emulated, 0);
  EXPECT_GT(real.device_bytes_per_s, 0);
  EXPECT_FALSE(device_pace_note(real, 0).has_value());

  const DevicePace nothing = measure_device_pace(BenchResult{}, 4e9);
  EXPECT_EQ(nothing.streamed_runs, 0);
  EXPECT_EQ(nothing.device_bytes_per_s, 0);
  EXPECT_FALSE(device_pace_note(nothing, 4e9).has_value());
}

}  // namespace
}  // namespace sf::bench
