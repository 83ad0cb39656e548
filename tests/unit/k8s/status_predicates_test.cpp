#include "gpuscale/k8s/status_predicates.h"

#include <gtest/gtest.h>

namespace gpuscale::k8s {
namespace status_predicates_test {

struct Row {
  const char* what;
  core::Status status;
  bool notFound;
  bool conflict;
  bool gone;
  bool tooMany;
};

const Row kRows[] = {
    {"ok", core::Status(), false, false, false, false},
    {"not found", core::Status::notFound("x"), true, false, false, false},
    {"404 without a reason", core::Status::plain("x", 404), true, false, false, false},
    {"conflict", core::Status(409, "Conflict", "x"), false, true, false, false},
    {"already exists", core::Status(409, "AlreadyExists", "x"), false, true, false, false},
    {"gone", core::Status(410, "Gone", "x"), false, false, true, false},
    {"expired inside a 500", core::Status(500, "Expired", "x"), false, false, true, false},
    {"too many requests", core::Status(429, "TooManyRequests", "x"), false, false, false, true},
    {"a message naming 404 decides nothing", core::Status::internal("got 404 Not Found"), false,
     false, false, false},
};

TEST(StatusPredicatesTest, DecidesByCodeAndReason) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(isNotFound(row.status), row.notFound);
    EXPECT_EQ(isConflict(row.status), row.conflict);
    EXPECT_EQ(isGone(row.status), row.gone);
    EXPECT_EQ(isTooManyRequests(row.status), row.tooMany);
  }
}

}  // namespace status_predicates_test
}  // namespace gpuscale::k8s
