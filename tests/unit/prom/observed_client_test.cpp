#include "gpuscale/prom/observed_client.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/client_metrics.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace observed_client_test {

TEST(ObservedClient, CountsCallsByEndpointAndResultClass) {
  auto backend = std::make_shared<fakes::FakePrometheusClient>();
  backend->setQuery("bad", prom::failure(prom::FailureKind::kTimeout, "2s"));
  auto registry = std::make_shared<prometheus::Registry>();
  ObservedClient client(backend, std::make_shared<ClientMetrics>(*registry, "gpuscale_adapter"));
  EXPECT_TRUE(client.query("good", {}).ok());
  EXPECT_TRUE(client.query("good", {}).ok());
  EXPECT_FALSE(client.query("bad", {}).ok());
  EXPECT_TRUE(client.labelValues("__name__", {"up"}, {}).ok());

  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  for (
      std::string line :
      {R"(gpuscale_adapter_prometheus_requests_total{backend="default",endpoint="query",result="success"} 2)",
       R"(gpuscale_adapter_prometheus_requests_total{backend="default",endpoint="query",result="timeout"} 1)",
       R"(gpuscale_adapter_prometheus_requests_total{backend="default",endpoint="label_values",result="success"} 1)",
       R"(gpuscale_adapter_prometheus_request_duration_seconds_count{backend="default",endpoint="query"} 3)"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
}

}  // namespace observed_client_test
}  // namespace gpuscale::prom
