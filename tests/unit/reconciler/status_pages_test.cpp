#include "gpuscale/reconciler/status_pages.h"

#include <gtest/gtest.h>

namespace gpuscale::reconciler {
namespace status_pages_test {

StatusSource source(bool synced) {
  return {[synced] { return synced; }, [] { return std::string(R"({"actions":[]})"); },
          [] { return true; }};
}

TEST(StatusPagesTest, ProbeListenerServesOnlyProbes) {
  struct Row {
    const char* path;
    bool synced;
    int status;
  };
  for (const Row& row : {Row{"/healthz", false, 200}, Row{"/livez", false, 200},
                         Row{"/readyz", false, 500}, Row{"/readyz", true, 200},
                         // Cluster state is not for unauthenticated callers.
                         Row{"/plan", true, 404}, Row{"/leader", true, 404},
                         Row{"/metrics", true, 404}, Row{"/", true, 404}}) {
    const auto reply = probeReply(row.path, source(row.synced));
    EXPECT_EQ(reply.status, row.status) << row.path;
    EXPECT_EQ(reply.body.find("actions"), std::string::npos) << row.path;
  }
}

TEST(StatusPagesTest, SecureListenerPages) {
  const auto plan = statusPage("/plan", source(true));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->contentType, "application/json");
  EXPECT_EQ(plan->body, R"({"actions":[]})");
  const auto leader = statusPage("/leader", source(true));
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->body, "true");
  EXPECT_FALSE(statusPage("/healthz", source(true)).has_value());
}

}  // namespace status_pages_test
}  // namespace gpuscale::reconciler
