#include <gtest/gtest.h>

#include "gpuscale/prom/discovery.h"

namespace gpuscale::prom {
namespace discovery_backend_test {

TEST(DiscoveryBackendTest, ParsesTheKnownNamesOnly) {
  struct Row {
    const char* name;
    std::optional<DiscoveryBackend> want;  // nullopt: refused
  };
  const Row rows[] = {
      {"prometheus", DiscoveryBackend::kPrometheus},
      {"victoriametrics", DiscoveryBackend::kVictoriaMetrics},
      {"VictoriaMetrics", std::nullopt},  // names are exact, as flag values are
      {"thanos", DiscoveryBackend::kThanos},
      {"mimir", std::nullopt},
      {"", std::nullopt},
  };
  for (const Row& row : rows) {
    auto got = parseDiscoveryBackend(row.name);
    EXPECT_EQ(got.ok(), row.want.has_value()) << row.name;
    if (got.ok() && row.want) {
      EXPECT_EQ(*got, *row.want) << row.name;
    }
    if (!got.ok()) {
      EXPECT_EQ(got.status().httpCode(), 400) << row.name;
      EXPECT_NE(got.status().message().find("prometheus, victoriametrics or thanos"),
                std::string::npos);
    }
  }
}

TEST(DiscoveryBackendTest, OptionsPerBackend) {
  struct Row {
    const char* what;
    DiscoveryBackend backend;
    LabelNamesStrategy strategy;
    size_t nameShards;
  };
  const DiscoveryOptions defaults;
  const Row rows[] = {
      {"Prometheus keeps the defaults: probes, split", DiscoveryBackend::kPrometheus,
       defaults.strategy, defaults.nameShards},
      {"VictoriaMetrics: the union, single calls", DiscoveryBackend::kVictoriaMetrics,
       LabelNamesStrategy::kUnion, 1},
      {"Thanos passes label calls to Prometheus: probes, split", DiscoveryBackend::kThanos,
       defaults.strategy, defaults.nameShards},
  };
  for (const Row& row : rows) {
    DiscoveryOptions got = discoveryOptionsFor(row.backend);
    EXPECT_EQ(got.strategy, row.strategy) << row.what;
    EXPECT_EQ(got.nameShards, row.nameShards) << row.what;
    EXPECT_EQ(got.concurrency, defaults.concurrency) << row.what;
    EXPECT_EQ(got.fallbackToSeries, defaults.fallbackToSeries) << row.what;
    EXPECT_TRUE(got.replicaLabels.empty()) << row.what << ": replica labels come from a flag";
  }
}

}  // namespace discovery_backend_test
}  // namespace gpuscale::prom
