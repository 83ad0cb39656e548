// What a mounted ConfigMap file shows (config_map_history.h): the newest version at least the
// sync delay old, initial versions at once, nothing for a ConfigMap newer than the delay, and a
// deletion after the delay.
#include "gpuscale/sim/config_map_history.h"

#include <gtest/gtest.h>

namespace gpuscale::sim {
namespace config_map_history_test {

using namespace std::chrono_literals;
using Clock = ConfigMapHistory::Clock;

ConfigMapHistory::Ptr version(const std::string& v) {
  return std::make_shared<const kube::Object>(kube::Object{{"data", {{"v", v}}}});
}

std::string shown(const ConfigMapHistory& h, Clock::time_point at) {
  auto object = h.asOf("cm", at);
  return object ? (*object)["data"]["v"].get<std::string>() : "-";
}

TEST(ConfigMapHistoryTest, AFileShowsTheNewestVersionAtLeastTheDelayOld) {
  const Clock::time_point t0 = Clock::now();
  struct Row {
    const char* what;
    std::vector<std::pair<std::optional<std::chrono::seconds>, std::string>> writes;  // nullopt:
                                                                                      // initial
    std::chrono::seconds readAt;
    std::string expect;  // "-": absent
  };
  const std::vector<Row> rows{
      {"an initial version shows at once", {{std::nullopt, "a"}}, 0s, "a"},
      {"a newer version shows only after the delay", {{std::nullopt, "a"}, {10s, "b"}}, 69s, "a"},
      {"... and then it does", {{std::nullopt, "a"}, {10s, "b"}}, 70s, "b"},
      {"a ConfigMap created lately is not there yet", {{10s, "b"}}, 30s, "-"},
      {"of several versions, the newest old enough",
       {{std::nullopt, "a"}, {0s, "b"}, {50s, "c"}, {100s, "d"}},
       120s,
       "c"},
      {"a deletion shows after the delay", {{std::nullopt, "a"}, {0s, "deleted"}}, 61s, "-"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    ConfigMapHistory h(60s);
    for (const auto& [at, v] : row.writes) {
      h.record("cm", v == "deleted" ? nullptr : version(v),
               at ? t0 + *at : Clock::time_point::min());
    }
    EXPECT_EQ(shown(h, t0 + row.readAt), row.expect);
    EXPECT_EQ(h.asOf("other", t0 + row.readAt), nullptr);
  }
}

TEST(ConfigMapHistoryTest, NoDelayShowsTheLatestVersion) {
  ConfigMapHistory h(0s);
  const Clock::time_point t0 = Clock::now();
  h.record("cm", version("a"), Clock::time_point::min());
  h.record("cm", version("b"), t0);
  EXPECT_EQ(shown(h, t0), "b");
}

}  // namespace config_map_history_test
}  // namespace gpuscale::sim
