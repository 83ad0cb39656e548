// Rule engine benchmarks: query rendering (per request), template execution, selector → matchers,
// and discovery (CustomRegistry::build) over 1,000,000 series and 1,000 metric names, for override
// rules,
// `<<.Resource>>` template rules and the six prometheus-adapter default rules.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/label_matchers.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/registry.h"
#include "gpuscale/rules/rule_set.h"
#include "support/triton_rules.h"

namespace {

namespace rules = gpuscale::rules;

constexpr const char* kTriton = gpuscale::testing::kTritonRules;

constexpr const char* kOverrides = R"(rules:
- seriesQuery: '{__name__=~"app_.*",namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name: {matches: "^app_(.*)_total$", as: "${1}_per_second"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)'
)";

constexpr const char* kTemplate = R"(rules:
- seriesQuery: '{__name__=~"app_.*",namespace!="",pod!=""}'
  resources: {template: "<<.Resource>>"}
  name: {matches: "^app_(.*)_total$", as: "${1}_per_second"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)'
)";

std::shared_ptr<const rules::RuleSet> compile(const char* yaml) {
  auto config = rules::parseRuleConfig(yaml, "bench.yaml");
  if (!config) std::abort();
  auto set = rules::compileRules(*config, gpuscale::k8s::BuiltinResourceTable::instance());
  if (!set) std::abort();
  return *set;
}

std::vector<std::string> podNames(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("triton-7d9f8c6b5-" + std::to_string(10000 + i));
  return names;
}

// Renders the Triton rule's query for `request` in the benchmark loop; reports the query's size.
void renderLoop(benchmark::State& state, const rules::RuleSet& set,
                const rules::QueryRequest& request) {
  size_t bytes = 0;
  for (auto _ : state) {
    auto query = set.rules[0].queryFor(request);
    bytes = query->size();
    benchmark::DoNotOptimize(query);
  }
  state.counters["query_bytes"] = static_cast<double>(bytes);
}

void BM_RenderTritonQuery(benchmark::State& state) {
  auto set = compile(kTriton);
  const std::vector<std::string> names = podNames(static_cast<size_t>(state.range(0)));
  rules::QueryRequest request{
      "nv_inference_queue_duration_us", {"", "pods"}, "default", names, nullptr, {}};
  renderLoop(state, *set, request);
}
BENCHMARK(BM_RenderTritonQuery)->Arg(1)->Arg(2)->Arg(100)->Arg(5000);

void BM_RenderAnyName(benchmark::State& state) {
  auto set = compile(kTriton);
  rules::QueryRequest request{
      "nv_inference_queue_duration_us", {"", "pods"}, "default", {}, nullptr, {}, true};
  renderLoop(state, *set, request);
}
BENCHMARK(BM_RenderAnyName);

void BM_RenderWithMetricSelector(benchmark::State& state) {
  auto set = compile(kTriton);
  const std::vector<std::string> names = podNames(2);
  auto selector =
      gpuscale::core::LabelSelector::parse("model in (resnet,densenet),version=1,!canary");
  if (!selector) std::abort();
  rules::QueryRequest request{
      "nv_inference_queue_duration_us", {"", "pods"}, "default", names, &*selector, {}};
  for (auto _ : state) benchmark::DoNotOptimize(set->rules[0].queryFor(request));
}
BENCHMARK(BM_RenderWithMetricSelector);

void BM_ParseSelectorToMatchers(benchmark::State& state) {
  for (auto _ : state) {
    auto selector = gpuscale::core::LabelSelector::parse(
        "model in (resnet,densenet),version=1,!canary,zone!=b");
    rules::LabelMatchers matchers;
    benchmark::DoNotOptimize(matchers.addSelector(*selector));
    benchmark::DoNotOptimize(matchers.joined());
  }
}
BENCHMARK(BM_ParseSelectorToMatchers);

void BM_TemplateParse(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(rules::Template::parse(
        "avg(delta(nv_inference_queue_duration_us{<<.LabelMatchers>>}[30s])/(1+delta("
        "nv_inference_request_success{<<.LabelMatchers>>}[30s]))) by (<<.GroupBy>>)"));
  }
}
BENCHMARK(BM_TemplateParse);

// 1,000 metric names × 1,000 pods, sorted by name as Prometheus returns them. Label name sets
// rotate through 4 interned variants so the "same labels as the previous series" shortcut rarely
// applies.
const rules::SeriesByQuery& millionSeries(const std::string& query) {
  static std::map<std::string, rules::SeriesByQuery> cache;
  auto it = cache.find(query);
  if (it != cache.end()) return it->second;
  std::vector<std::shared_ptr<const rules::LabelNames>> variants = {
      std::make_shared<const rules::LabelNames>(
          rules::LabelNames{"container", "instance", "job", "namespace", "pod"}),
      std::make_shared<const rules::LabelNames>(rules::LabelNames{
          "container", "endpoint", "instance", "job", "namespace", "pod", "service"}),
      std::make_shared<const rules::LabelNames>(
          rules::LabelNames{"instance", "job", "namespace", "node", "pod"}),
      std::make_shared<const rules::LabelNames>(rules::LabelNames{
          "deployment", "instance", "job", "model", "namespace", "pod", "version"}),
  };
  std::vector<rules::Series> series;
  series.reserve(1000000);
  for (int m = 0; m < 1000; ++m) {
    std::string name =
        "app_metric_" + std::to_string(1000 + m) + (m % 5 == 0 ? "_bytes" : "_total");
    for (int p = 0; p < 1000; ++p) {
      series.push_back(rules::Series::withLabels(name, variants[static_cast<size_t>(p) % 4]));
    }
  }
  return cache.emplace(query, rules::SeriesByQuery{{query, std::move(series)}}).first->second;
}

void buildRegistry(benchmark::State& state, const char* yaml) {
  auto set = compile(yaml);
  const rules::SeriesByQuery& series = millionSeries(set->rules[0].seriesQuery());
  size_t entries = 0;
  for (auto _ : state) {
    auto registry = rules::CustomRegistry::build(set, series);
    entries = (*registry)->entries().size();
    benchmark::DoNotOptimize(registry);
  }
  state.counters["entries"] = static_cast<double>(entries);
  state.counters["series_per_second"] =
      benchmark::Counter(1e6, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_BuildRegistry1M_Overrides(benchmark::State& state) { buildRegistry(state, kOverrides); }
BENCHMARK(BM_BuildRegistry1M_Overrides)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_BuildRegistry1M_ResourceTemplate(benchmark::State& state) {
  buildRegistry(state, kTemplate);
}
BENCHMARK(BM_BuildRegistry1M_ResourceTemplate)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
