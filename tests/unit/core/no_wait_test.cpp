#include "gpuscale/core/no_wait.h"

#include <gtest/gtest.h>

#include <thread>

namespace gpuscale::core {
namespace no_wait_test {

TEST(NoWaitTest, OutsideAScopeWaitingIsAllowed) {
  EXPECT_TRUE(mayWait());
  EXPECT_FALSE(waitRefused());
}

TEST(NoWaitTest, InsideAScopeAWaitIsRefusedAndRemembered) {
  const NoWaitScope scope;
  EXPECT_FALSE(scope.refused());
  EXPECT_FALSE(waitRefused());
  EXPECT_FALSE(mayWait());
  EXPECT_TRUE(scope.refused());
  EXPECT_TRUE(waitRefused());
  EXPECT_EQ(wouldBlock().httpCode(), 503);
}

TEST(NoWaitTest, ScopesNestAndBelongToTheirThread) {
  const NoWaitScope outer;
  {
    const NoWaitScope inner;
    EXPECT_FALSE(mayWait());
    EXPECT_TRUE(inner.refused());
  }
  EXPECT_FALSE(outer.refused());  // the inner scope took the refusal
  bool otherThreadMayWait = false;
  std::thread([&] { otherThreadMayWait = mayWait(); }).join();
  EXPECT_TRUE(otherThreadMayWait);
  EXPECT_FALSE(outer.refused());
}

}  // namespace no_wait_test
}  // namespace gpuscale::core
