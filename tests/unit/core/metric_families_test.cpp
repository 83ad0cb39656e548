#include "gpuscale/core/metric_families.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>

namespace gpuscale::core {
namespace metric_families_test {

std::string exposition(prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return out.str();
}

TEST(MetricFamiliesTest, RegistersNameHelpAndType) {
  prometheus::Registry registry;
  counter(registry, "demo_events_total", "Events seen").Increment(2);
  gauge(registry, "demo_level", "The level now").Set(5);
  gaugeFamily(registry, "demo_by_kind", "Things by kind").Add({{"kind", "a"}}).Set(1);
  histogramFamily(registry, "demo_seconds", "Durations")
      .Add({}, prometheus::Histogram::BucketBoundaries{1})
      .Observe(0.5);
  const std::string text = exposition(registry);
  for (const char* line :
       {"# HELP demo_events_total Events seen", "# TYPE demo_events_total counter",
        "demo_events_total 2", "# TYPE demo_level gauge", "demo_level 5",
        "demo_by_kind{kind=\"a\"} 1", "# TYPE demo_seconds histogram", "demo_seconds_count 1"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(MetricFamiliesTest, TheSameNameTwiceIsOneFamily) {
  prometheus::Registry registry;
  auto& first = counterFamily(registry, "demo_reloads_total", "Reloads");
  auto& second = counterFamily(registry, "demo_reloads_total", "Reloads");
  EXPECT_EQ(&first, &second);
  EXPECT_THROW(gaugeFamily(registry, "demo_reloads_total", "Reloads"), std::invalid_argument);
}

// A timestamp gauge's value: seconds since the epoch, fractions kept.
TEST(MetricFamiliesTest, UnixSecondsOfATimePoint) {
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  EXPECT_EQ(unixSeconds(system_clock::time_point{}), 0.0);
  EXPECT_DOUBLE_EQ(unixSeconds(system_clock::time_point{milliseconds(1'796'000'000'250)}),
                   1'796'000'000.25);
}

}  // namespace metric_families_test
}  // namespace gpuscale::core
