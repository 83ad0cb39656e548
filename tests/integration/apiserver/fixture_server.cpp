// gpuscale-fixture-apiserver: the metrics API server over fake providers with fixed data, for the
// integration tests (kubectl, curl, python clients, signals). Serving flags as the adapter's; plus
//   --slow-delay=<Go duration>   how long requests for the metric "slow_metric" take (default 2s)
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "fakes/fake_metrics_provider.h"
#include "gpuscale/apiserver/serve.h"
#include "gpuscale/core/flag_set.h"

using gpuscale::apiserver::CustomMetricInfo;
using gpuscale::core::Quantity;
using gpuscale::testing::FakeCustomMetricsProvider;
using gpuscale::testing::FakeExternalMetricsProvider;

namespace {

void addFixtureData(FakeCustomMetricsProvider& custom, FakeExternalMetricsProvider& external) {
  const CustomMetricInfo queue{{"", "pods"}, true, "avg_time_queue_us"};
  const int64_t millis[] = {399300, 0, 4275};
  for (int i = 0; i < 3; ++i) {
    custom.addValue({queue,
                     {"Pod", "default", "triton-" + std::to_string(i), "/v1"},
                     {{"app", "triton"}},
                     Quantity::fromMilli(millis[i])});
  }
  custom.addValue(
      {queue, {"Pod", "default", "other-0", "/v1"}, {{"app", "other"}}, Quantity::fromMilli(7)});
  custom.addValue({{{"", "namespaces"}, false, "avg_time_queue_us"},
                   {"Namespace", "", "default", "/v1"},
                   {},
                   Quantity::fromMilli(1500)});
  custom.addValue({{{"", "nodes"}, false, "gpu_utilization"},
                   {"Node", "", "node-a", "/v1"},
                   {{"gpu", "a100"}},
                   Quantity::fromMilli(870)});
  custom.addValue({{{"apps", "deployments"}, true, "requests_per_second"},
                   {"Deployment", "default", "triton", "apps/v1"},
                   {},
                   Quantity::fromMilli(1'000'000)});
  custom.addMetric({{"", "pods"}, true, "broken_metric"});
  custom.failMetric("broken_metric", gpuscale::core::Status::internal("unable to fetch metrics"));
  custom.addValue({{{"", "pods"}, true, "slow_metric"},
                   {"Pod", "default", "triton-0", "/v1"},
                   {{"app", "triton"}},
                   Quantity::fromMilli(1)});
  external.addSample({"queue_depth", "default", std::map<std::string, std::string>{{"topic", "t1"}},
                      Quantity::fromMilli(42'000)});
}

}  // namespace

int main(int argc, char** argv) {
  gpuscale::apiserver::ServerOptions options;
  options.bindAddress = "127.0.0.1";
  std::chrono::milliseconds slowDelay{2000};
  gpuscale::core::FlagSet flags("gpuscale-fixture-apiserver");
  options.addFlags(flags);
  flags.addDuration("slow-delay", &slowDelay, "how long requests for slow_metric take");
  auto rest = flags.parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!rest || !rest->empty()) {
    spdlog::error("{}", rest ? "unexpected argument " + rest->front() : rest.status().message());
    return 2;
  }
  auto custom = std::make_shared<FakeCustomMetricsProvider>();
  auto external = std::make_shared<FakeExternalMetricsProvider>();
  addFixtureData(*custom, *external);
  custom->delayMetric("slow_metric", slowDelay);

  gpuscale::apiserver::ApiHandlerConfig config;
  config.customMetrics = custom;
  config.externalMetrics = external;
  return gpuscale::apiserver::serveUntilTerminated(options, std::move(config));
}
