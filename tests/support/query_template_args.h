// The data prometheus-adapter passes to a metricsQuery template (naming.queryTemplateArgs), with
// fixed values: a counter's name, its label matchers, the values by label, and the group-by
// labels as text and as a slice. Shared by the template engine's unit test and its fuzzer.
#pragma once

#include <string>
#include <vector>

#include "gpuscale/rules/template.h"

namespace gpuscale::testing {

struct QueryTemplateArgs {
  // `groupBy` is the .GroupBy text; .GroupBySlice is always [pod container].
  explicit QueryTemplateArgs(std::string groupBy = "pod,container") : groupBy(std::move(groupBy)) {}
  // `data` points into the object.
  QueryTemplateArgs(const QueryTemplateArgs&) = delete;
  QueryTemplateArgs& operator=(const QueryTemplateArgs&) = delete;

  rules::TemplateValue series = std::string("http_requests_total");
  rules::TemplateValue matchers = std::string(R"(namespace="ns",pod=~"a|b")");
  rules::TemplateValue values = rules::StringMap{{"namespace", "ns"}, {"pod", "a|b"}};
  rules::TemplateValue groupBy;
  rules::TemplateValue slice = std::vector<std::string>{"pod", "container"};
  rules::TemplateData data{"naming.queryTemplateArgs",
                           {{"Series", &series},
                            {"LabelMatchers", &matchers},
                            {"LabelValuesByName", &values},
                            {"GroupBy", &groupBy},
                            {"GroupBySlice", &slice}}};
};

}  // namespace gpuscale::testing
