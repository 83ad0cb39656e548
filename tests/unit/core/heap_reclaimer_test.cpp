#include "gpuscale/core/heap_reclaimer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "support/wait_until.h"

namespace gpuscale::core {
namespace heap_reclaimer_test {

using namespace std::chrono_literals;

// Quick thresholds and no periodic trim, so each trim is one the test asked for.
HeapReclaimer::Options quick() {
  HeapReclaimer::Options options;
  options.trimThreshold = 1000;
  options.minTrimInterval = 10ms;
  options.periodicTrim = std::chrono::hours(1);
  return options;
}

TEST(HeapReclaimerTest, TrimsOnceEnoughHasBeenFreedAndNotBefore) {
  HeapReclaimer reclaimer(quick());
  // The first trim of a reclaimer is due at once (nothing trimmed yet); wait for it.
  ASSERT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims == 1; }, 10s, 1ms));
  reclaimer.noteFreed(999);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(reclaimer.stats().trims, 1u);
  reclaimer.noteFreed(1);
  EXPECT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims == 2; }, 10s, 1ms));
  EXPECT_EQ(reclaimer.stats().bytesNoted, 1000u);
}

TEST(HeapReclaimerTest, ATrimHeldBackByTheIntervalHappensWhenItEnds) {
  auto options = quick();
  options.minTrimInterval = 200ms;
  HeapReclaimer reclaimer(options);
  ASSERT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims == 1; }, 10s, 1ms));
  // Noted right after a trim: held back, then done without any further call.
  reclaimer.noteFreed(5000);
  EXPECT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims == 2; }, 10s, 1ms));
}

TEST(HeapReclaimerTest, TrimsPeriodicallyWithoutNotes) {
  auto options = quick();
  options.periodicTrim = 20ms;
  HeapReclaimer reclaimer(options);
  EXPECT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims >= 3; }, 10s, 1ms));
  EXPECT_EQ(reclaimer.stats().bytesNoted, 0u);
}

TEST(HeapReclaimerTest, SweepersRunUntilTheirRegistrationGoes) {
  HeapReclaimer reclaimer(quick());
  std::atomic<int> sweeps{0};
  {
    auto registration = reclaimer.addSweeper(10ms, [&] { ++sweeps; });
    ASSERT_TRUE(testing::waitUntil([&] { return sweeps >= 3; }, 10s, 1ms));
  }
  const int after = sweeps.load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(sweeps.load(), after);
}

TEST(HeapReclaimerTest, ASweeperMayNoteWhatItFreed) {
  HeapReclaimer reclaimer(quick());
  ASSERT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims == 1; }, 10s, 1ms));
  std::atomic<bool> noted{false};
  auto registration = reclaimer.addSweeper(10ms, [&] {
    if (!noted.exchange(true)) reclaimer.noteFreed(4096);
  });
  EXPECT_TRUE(testing::waitUntil([&] { return reclaimer.stats().trims == 2; }, 10s, 1ms));
  EXPECT_EQ(reclaimer.stats().bytesNoted, 4096u);
}

TEST(HeapReclaimerTest, HeapInUseFollowsLiveAllocations) {
  const size_t before = HeapReclaimer::heapInUseBytes();
  ASSERT_GT(before, 0u);
  auto block = std::make_unique<std::vector<char>>(size_t{8} << 20, 'x');
  // Read through a volatile so the allocation cannot be elided.
  volatile char seen = (*block)[block->size() / 2];
  EXPECT_EQ(seen, 'x');
  EXPECT_GE(HeapReclaimer::heapInUseBytes(), before + (size_t{8} << 20) - (size_t{1} << 20));
  block.reset();
  EXPECT_LT(HeapReclaimer::heapInUseBytes(), before + (size_t{1} << 20));
}

}  // namespace heap_reclaimer_test
}  // namespace gpuscale::core
