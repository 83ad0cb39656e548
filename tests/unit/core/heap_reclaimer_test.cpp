#include "gpuscale/core/heap_reclaimer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "support/wait_until.h"

namespace gpuscale::core {
namespace {

using namespace std::chrono_literals;

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

TEST(HeapReclaimerTest, HeapInUseFollowsLiveAllocations) {
  const size_t before = HeapReclaimer::heapInUseBytes();
  ASSERT_GT(before, 0u);
  auto block = std::make_unique<std::vector<char>>(8 << 20, 'x');
  EXPECT_GE(HeapReclaimer::heapInUseBytes(), before + (8 << 20) - (1 << 20));
  block.reset();
  EXPECT_LT(HeapReclaimer::heapInUseBytes(), before + (1 << 20));
}

}  // namespace
}  // namespace gpuscale::core
