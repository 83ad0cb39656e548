#include "gpuscale/core/scoped_release.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace gpuscale::core {
namespace scoped_release_test {

struct Note {
  std::vector<int>* released;
  int id;
  void operator()() const { released->push_back(id); }
};
using Handle = ScopedRelease<Note>;

TEST(ScopedReleaseTest, ReleasesOnceWhenDestroyed) {
  std::vector<int> released;
  {
    Handle handle(Note{&released, 1});
    EXPECT_TRUE(handle.held());
  }
  EXPECT_EQ(released, std::vector<int>{1});
}

TEST(ScopedReleaseTest, EmptyHandlesReleaseNothing) {
  std::vector<int> released;
  { Handle empty; }
  Handle handle(Note{&released, 1});
  Handle moved(std::move(handle));
  EXPECT_FALSE(handle.held());  // NOLINT(bugprone-use-after-move): the moved-from state is the test
  EXPECT_TRUE(moved.held());
  EXPECT_TRUE(released.empty());
  moved.reset();
  moved.reset();
  EXPECT_EQ(released, std::vector<int>{1}) << "reset releases once";
}

TEST(ScopedReleaseTest, AssigningOverReleasesTheOldHold) {
  std::vector<int> released;
  Handle a(Note{&released, 1});
  Handle b(Note{&released, 2});
  a = std::move(b);
  EXPECT_EQ(released, std::vector<int>{1});
  a = Handle();
  EXPECT_EQ(released, (std::vector<int>{1, 2}));
  auto& self = a;
  a = std::move(self);
  EXPECT_EQ(released, (std::vector<int>{1, 2})) << "self-assignment changes nothing";
}

}  // namespace scoped_release_test
}  // namespace gpuscale::core
