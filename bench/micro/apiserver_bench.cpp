// The API layer's per-request work without TLS or sockets: routing, the handler (with the fake
// provider) and the wire-format encoders, for an HPA-style wildcard request over ten pods.
#include <benchmark/benchmark.h>

#include "fakes/fake_metrics_provider.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/metric_request.h"
#include "gpuscale/apiserver/wire_format.h"

namespace {

using namespace gpuscale;

constexpr const char* kPath =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/avg_time_queue_us";
constexpr const char* kQuery = "labelSelector=app%3Dtriton";

std::shared_ptr<testing::FakeCustomMetricsProvider> tenPods() {
  auto provider = std::make_shared<testing::FakeCustomMetricsProvider>();
  const apiserver::CustomMetricInfo info{{"", "pods"}, true, "avg_time_queue_us"};
  for (int i = 0; i < 10; ++i) {
    provider->addValue({info,
                        {"Pod", "default", "triton-" + std::to_string(i), "/v1"},
                        {{"app", "triton"}},
                        core::Quantity::fromMilli(1000 + 37 * i)});
  }
  return provider;
}

std::vector<apiserver::MetricValue> tenValues() {
  auto provider = tenPods();
  return *provider->getMetricBySelector("default", *core::LabelSelector::parse("app=triton"),
                                        provider->listMetrics().front(), {});
}

void BM_RouteWildcard(benchmark::State& state) {
  for (auto _ : state) {
    const auto query = apiserver::QueryParams::parse(kQuery);
    auto route =
        apiserver::routeMetricsApi("GET", "custom.metrics.k8s.io", "v1beta1", kPath, query);
    benchmark::DoNotOptimize(route);
  }
}
BENCHMARK(BM_RouteWildcard);

void BM_EncodeTenValuesDirect(benchmark::State& state) {
  const auto values = tenValues();
  for (auto _ : state)
    benchmark::DoNotOptimize(apiserver::encodeMetricValueList("v1beta1", values, false));
}
BENCHMARK(BM_EncodeTenValuesDirect);

void BM_EncodeTenValuesJsonTree(benchmark::State& state) {
  const auto values = tenValues();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        apiserver::encodeJson(*apiserver::metricValueListJson("v1beta1", values), false));
  }
}
BENCHMARK(BM_EncodeTenValuesJsonTree);

void BM_HandleWildcard(benchmark::State& state) {
  apiserver::ApiHandlerConfig config;
  config.customMetrics = tenPods();
  const apiserver::ApiHandler handler(config);
  apiserver::HttpRequest request;
  request.method = "GET";
  request.path = kPath;
  request.rawQuery = kQuery;
  request.headers = {{"Host", "127.0.0.1"},
                     {"User-Agent", "kube-controller-manager/v1.33"},
                     {"Accept", "application/json, */*"}};
  for (auto _ : state) benchmark::DoNotOptimize(handler.handle(request));
}
BENCHMARK(BM_HandleWildcard);

}  // namespace
