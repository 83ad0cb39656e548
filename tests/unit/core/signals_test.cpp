#include "gpuscale/core/signals.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace gpuscale::core {
namespace signals_test {

TEST(StopSignalsTest, AWaitedSignalStaysPendingUntilWaitTakesIt) {
  const StopSignals signals({SIGUSR1});
  ASSERT_EQ(raise(SIGUSR1), 0);  // blocked: no handler runs, the process is not stopped
  EXPECT_EQ(signals.wait(), SIGUSR1);
}

TEST(StopSignalsTest, StopEarlyEndsTheWaitWithoutASignal) {
  const StopSignals signals({SIGUSR2});
  std::atomic<bool> done{false};
  std::thread setter([&] { done = true; });
  EXPECT_EQ(signals.wait([&] { return done.load(); }), 0);
  setter.join();
}

TEST(StopSignalsTest, ASignalEndsAWaitThatCouldAlsoStopEarly) {
  const StopSignals signals({SIGUSR1});
  ASSERT_EQ(raise(SIGUSR1), 0);
  EXPECT_EQ(signals.wait([] { return false; }), SIGUSR1);
}

}  // namespace signals_test
}  // namespace gpuscale::core
