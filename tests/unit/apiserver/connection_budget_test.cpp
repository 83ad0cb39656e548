#include "connection_budget.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpuscale::apiserver::detail {
namespace connection_budget_test {

TEST(ConnectionBudgetTest, AdmitsByListenerSourceAndProbeRoom) {
  struct Step {
    const char* what;
    const char* source;
    Admission expected;
  };
  // cap 3, at most 2 per source, 1 more for a probe.
  const std::vector<Step> steps = {
      {"first from a", "10.0.0.1", Admission::kRegular},
      {"second from a", "10.0.0.1", Admission::kRegular},
      {"a third from a: its source is full", "10.0.0.1", Admission::kSourceFull},
      {"first from b", "10.0.0.2", Admission::kRegular},
      {"the cap is reached: the probe room", "10.0.0.3", Admission::kProbeOnly},
      {"the probe room is full too", "10.0.0.4", Admission::kListenerFull},
  };
  auto budget = std::make_shared<ConnectionBudget>(ListenerLimits{3, 2, 1});
  std::vector<ConnectionBudget::Ticket> held;
  for (const Step& step : steps) {
    ConnectionBudget::Ticket ticket;
    EXPECT_EQ(budget->admit(step.source, ticket), step.expected) << step.what;
    held.push_back(std::move(ticket));
  }
  EXPECT_EQ(budget->open(), 4u);
  // Giving places back: the second ticket (a's) and the probe's.
  held[1] = ConnectionBudget::Ticket();
  held[4] = ConnectionBudget::Ticket();
  EXPECT_EQ(budget->open(), 2u);
  ConnectionBudget::Ticket again;
  EXPECT_EQ(budget->admit("10.0.0.1", again), Admission::kRegular);
  ConnectionBudget::Ticket probe;
  EXPECT_EQ(budget->admit("10.0.0.9", probe), Admission::kProbeOnly);
}

TEST(ConnectionBudgetTest, ZeroMeansNoLimit) {
  auto budget = std::make_shared<ConnectionBudget>(ListenerLimits{0, 0, 0});
  std::vector<ConnectionBudget::Ticket> held(1000);
  for (auto& ticket : held) ASSERT_EQ(budget->admit("10.0.0.1", ticket), Admission::kRegular);
  EXPECT_EQ(budget->open(), 1000u);
  held.clear();
  EXPECT_EQ(budget->open(), 0u);
}

TEST(ConnectionBudgetTest, TicketsOutliveTheirBudget) {
  ConnectionBudget::Ticket ticket;
  {
    auto budget = std::make_shared<ConnectionBudget>(ListenerLimits{1, 1, 0});
    ASSERT_EQ(budget->admit("10.0.0.1", ticket), Admission::kRegular);
  }
  ticket = ConnectionBudget::Ticket();  // releases into the budget it keeps alive
}

}  // namespace connection_budget_test
}  // namespace gpuscale::apiserver::detail
