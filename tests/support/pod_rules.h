// A rules file with one custom rule for tests: `series` per pod and per namespace (resource
// overrides), summed by the requested objects. The text ends with the rule, so tests append
// further items to its `rules:` list or further sections. And what a scripted Prometheus holding
// the series `m{namespace, pod}` answers, for tests of those rules against HttpTestServer.
#pragma once

#include <optional>
#include <string>

#include "support/http_test_server.h"

namespace gpuscale::testing {

inline std::string podSumRules(const std::string& series) {
  return R"(rules:
- seriesQuery: ')" +
         series + R"({namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)";
}

// The answers to discovery's label calls (the __name__ values and the label names) of a Prometheus
// holding `m{namespace, pod}`; nullopt for any other request.
inline std::optional<gpuscale::test::HttpTestResponse> podMetricDiscovery(
    const gpuscale::test::HttpTestRequest& request) {
  gpuscale::test::HttpTestResponse r;
  if (request.path == "/api/v1/label/__name__/values") {
    r.body = R"({"status":"success","data":["m"]})";
  } else if (request.path == "/api/v1/labels") {
    r.body = R"({"status":"success","data":["__name__","namespace","pod"]})";
  } else {
    return std::nullopt;
  }
  return r;
}

// An instant query's answer: m of pod p is 1.5.
inline constexpr const char* kPodMetricVector =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"p"},"value":[1714557600,"1.5"]}]}})";

}  // namespace gpuscale::testing
