#include "gpuscale/adapter/query_runner.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <optional>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::adapter {
namespace query_runner_test {

TEST(QueryRunnerFetchError, NamesTheCauseOnceWithTheRightCode) {
  struct Case {
    std::string what;
    core::Status cause;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"connection refused is transient", prom::failure(prom::FailureKind::kConnection, "refused"),
       503, "unable to fetch metrics: prometheus connection failed: refused"},
      {"timeout is transient", prom::failure(prom::FailureKind::kTimeout, "2s"), 503,
       "unable to fetch metrics: prometheus timeout: 2s"},
      {"garbage is an internal error", prom::failure(prom::FailureKind::kBadJson, "at byte 1"), 500,
       "Internal error occurred: unable to fetch metrics: prometheus bad JSON: at byte 1"},
      {"an overloaded Prometheus (HTTP 503) is transient",
       prom::failure(prom::FailureKind::kHttpStatus, "503", true), 503,
       "unable to fetch metrics: prometheus bad HTTP status: 503"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    core::Status status = QueryRunner::fetchError(c.cause);
    EXPECT_EQ(status.httpCode(), c.code);
    EXPECT_EQ(status.message(), c.message);
  }
}

TEST(QueryRunner, ServesNumbersAndLeavesOutWhatIsNotANumberCountedByApiAndReason) {
  struct Row {
    std::string what;
    std::string api;
    double value;
    std::optional<std::string> served;  // the quantity's text, or left out
  };
  const std::vector<Row> rows = {
      {"a plain value (truncated to milli units)", "custom", 1.0005, "1"},
      {"a negative value", "external", -2.5, "-2500m"},
      {"finite beyond the int64 milli range saturates", "custom", 1e300, "9223372036854775807m"},
      {"NaN, custom", "custom", std::nan(""), std::nullopt},
      {"+Inf, custom: never the maximum", "custom", INFINITY, std::nullopt},
      {"-Inf, custom", "custom", -INFINITY, std::nullopt},
      {"NaN, external", "external", std::nan(""), std::nullopt},
      {"+Inf, external", "external", INFINITY, std::nullopt},
  };
  auto registry = std::make_shared<prometheus::Registry>();
  QueryRunner runner(std::make_shared<fakes::FakePrometheusClient>(), nullptr, registry);
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    std::optional<core::Quantity> got = runner.servedValue(row.api, row.value);
    ASSERT_EQ(got.has_value(), row.served.has_value());
    if (got) {
      EXPECT_EQ(got->toString(), *row.served);
    }
  }
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  for (std::string line : {"gpuscale_adapter_nan_values_total{api=\"custom\"} 1",
                           "gpuscale_adapter_nan_values_total{api=\"external\"} 1",
                           "gpuscale_adapter_infinite_values_total{api=\"custom\"} 2",
                           "gpuscale_adapter_infinite_values_total{api=\"external\"} 1"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(QueryRunner, RejectsResultTypesTheCallerCannotUse) {
  auto prometheus = std::make_shared<fakes::FakePrometheusClient>();
  auto scalar = std::make_shared<prom::QueryResult>();
  scalar->type = prom::ResultType::kScalar;
  prometheus->setQuery("q", prom::QueryResultPtr(scalar));
  QueryRunner runner(prometheus, nullptr, nullptr);
  auto vectorOnly = runner.run("q", {prom::ResultType::kVector});
  ASSERT_FALSE(vectorOnly.ok());
  EXPECT_EQ(vectorOnly.status().httpCode(), 500);
  EXPECT_NE(vectorOnly.status().message().find("scalar where a vector was expected"),
            std::string::npos)
      << vectorOnly.status().message();
  EXPECT_TRUE(runner.run("q", {prom::ResultType::kVector, prom::ResultType::kScalar}).ok());
}

TEST(QueryRunner, ExportsTheCacheSizeAndWhatItDropped) {
  auto prometheus = std::make_shared<fakes::FakePrometheusClient>();
  auto big = std::make_shared<prom::QueryResult>();
  for (int i = 0; i < 100; ++i) {
    prom::Sample sample;
    sample.metric = {{"pod", std::string(64, 'p') + std::to_string(i)}};
    big->vector.push_back(std::move(sample));
  }
  prometheus->setQuery("big", prom::QueryResultPtr(big));
  prom::CacheOptions options;
  options.ttl = std::chrono::hours(1);
  options.maxBytes = 4096;
  auto cache = std::make_shared<prom::CachingClient>(prometheus, options);
  auto registry = std::make_shared<prometheus::Registry>();
  QueryRunner runner(cache, cache, registry);
  ASSERT_TRUE(runner.run("small", {prom::ResultType::kVector}).ok());
  ASSERT_TRUE(runner.run("big", {prom::ResultType::kVector}).ok());
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  const size_t bytes = cache->stats().bytes;
  ASSERT_GT(bytes, 0u);
  ASSERT_LE(bytes, 4096u);
  for (const std::string& line : std::vector<std::string>{
           "gpuscale_adapter_query_cache_entries{backend=\"default\"} 1",
           "gpuscale_adapter_query_cache_bytes{backend=\"default\"} " + std::to_string(bytes),
           "gpuscale_adapter_query_cache_dropped_total{backend=\"default\",reason=\"too_large\"} 1",
           "gpuscale_adapter_query_cache_dropped_total{backend=\"default\",reason=\"size\"} 0"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(QueryRunner, ReportsQueriesWithAnOriginToRuleStatus) {
  auto prometheus = std::make_shared<fakes::FakePrometheusClient>();
  auto status = std::make_shared<RuleStatus>(nullptr);
  QueryRunner runner(prometheus, nullptr, nullptr, status);
  const QueryOrigin origin{"rules[0]", "m"};
  auto matrix = std::make_shared<prom::QueryResult>();
  matrix->type = prom::ResultType::kMatrix;
  prometheus->setQuery("matrix", prom::QueryResultPtr(matrix));
  prometheus->setQuery("down", prom::failure(prom::FailureKind::kConnection, "refused"));

  EXPECT_TRUE(runner.run("empty", {prom::ResultType::kVector}, &origin).ok());
  EXPECT_FALSE(runner.run("matrix", {prom::ResultType::kVector}, &origin).ok());
  EXPECT_FALSE(runner.run("down", {prom::ResultType::kVector}, &origin).ok());
  EXPECT_TRUE(runner.run("no origin", {prom::ResultType::kVector}).ok());
  RuleState state = status->state("rules[0]");
  EXPECT_EQ(state.queries, 3u);
  EXPECT_EQ(state.emptyResults, 1u);
  EXPECT_EQ(state.queryErrors, 2u);
  ASSERT_TRUE(state.lastQueryError.has_value());
  EXPECT_EQ(state.lastQueryError->errorClass, "unreachable");
}

}  // namespace query_runner_test
}  // namespace gpuscale::adapter
