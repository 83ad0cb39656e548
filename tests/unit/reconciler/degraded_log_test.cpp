// DegradedLog: a condition that lasts across passes is logged once until it clears, and every
// occurrence counts in /metrics.
#include "gpuscale/reconciler/degraded_log.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace gpuscale::reconciler {
namespace degraded_log_test {

TEST(DegradedLogTest, LogsOnceUntilClearedAndCountsEveryOccurrence) {
  auto registry = std::make_shared<prometheus::Registry>();
  DegradedLog log(std::make_shared<ReconcilerMetrics>(registry));
  struct Step {
    const char* what;
    bool fail;  // else clear
    const char* object;
    bool logs;  // failed() reports that it logged
  };
  const std::vector<Step> steps{
      {"first failure is logged", true, "default/triton", true},
      {"the same condition on the next pass is not", true, "default/triton", false},
      {"another object is its own condition", true, "default/other", true},
      {"cleared", false, "default/triton", false},
      {"failing again after clearing is logged again", true, "default/triton", true},
  };
  for (const auto& s : steps) {
    SCOPED_TRACE(s.what);
    if (s.fail) {
      EXPECT_EQ(log.failed("hpa_status", s.object, "HTTP 500"), s.logs);
      EXPECT_TRUE(log.active("hpa_status", s.object));
    } else {
      log.cleared("hpa_status", s.object);
      EXPECT_FALSE(log.active("hpa_status", s.object));
    }
  }
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_NE(text.find("gpuscale_reconciler_degraded_total{what=\"hpa_status\"} 4"),
            std::string::npos)
      << text;
}

}  // namespace degraded_log_test
}  // namespace gpuscale::reconciler
