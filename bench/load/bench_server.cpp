// gpuscale-bench-server: the metrics API server over a fake provider that returns a fixed list (ten
// pods of one Deployment), to measure the HTTPS serving layer alone. Serving flags as the
// adapter's.
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "fakes/fake_metrics_provider.h"
#include "gpuscale/apiserver/serve.h"

int main(int argc, char** argv) {
  gpuscale::apiserver::ServerOptions options;
  options.bindAddress = "127.0.0.1";
  auto rest = gpuscale::apiserver::parseServingFlags(
      std::vector<std::string>(argv + 1, argv + argc), options);
  if (!rest || !rest->empty()) {
    spdlog::error("{}", rest ? "unknown flag " + rest->front() : rest.status().message());
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);
  auto custom = std::make_shared<gpuscale::testing::FakeCustomMetricsProvider>();
  const gpuscale::apiserver::CustomMetricInfo info{{"", "pods"}, true, "avg_time_queue_us"};
  for (int i = 0; i < 10; ++i) {
    custom->addValue({info,
                      {"Pod", "default", "triton-" + std::to_string(i), "/v1"},
                      {{"app", "triton"}},
                      gpuscale::core::Quantity::fromMilli(1000 + 37 * i)});
  }
  gpuscale::apiserver::ApiHandlerConfig config;
  config.customMetrics = custom;
  return gpuscale::apiserver::serveUntilTerminated(options, std::move(config));
}
