// The client observer seam: what RestKubeClient and Informer report (through a recording fake
// observer), the bounded labels, and the Prometheus families KubeClientMetrics registers.
#include "gpuscale/kube/client_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>
#include <thread>

#include "fakes/fake_kube_client.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/kube/rest_client.h"
#include "support/http_test_server.h"
#include "support/wait_until.h"

namespace gpuscale::kube {
namespace client_metrics_test {

using test::HttpTestRequest;
using test::HttpTestServer;

// Records every call as one line ("request get pods 2xx", "watch pods", ...).
class RecordingObserver final : public ClientObserver {
 public:
  void requestDone(std::string_view verb, std::string_view resource, int code,
                   Seconds latency) override {
    EXPECT_GE(latency.count(), 0);
    push("request " + std::string(verb) + " " + std::string(resource) + " " + codeClass(code));
  }
  void rateLimiterWaited(Seconds wait) override {
    std::lock_guard lock(mu_);
    ++waits_;
    waited_ += wait;
  }
  void watchStarted(std::string_view resource) override { push("watch " + std::string(resource)); }
  void relistedAfterGone(std::string_view resource) override {
    push("gone " + std::string(resource));
  }
  void informerListed(std::string_view resource) override {
    push("listed " + std::string(resource));
  }

  std::vector<std::string> log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  size_t count(const std::string& line) {
    auto copy = log();
    return static_cast<size_t>(std::count(copy.begin(), copy.end(), line));
  }
  int waits() {
    std::lock_guard lock(mu_);
    return waits_;
  }

 private:
  void push(std::string line) {
    std::lock_guard lock(mu_);
    log_.push_back(std::move(line));
  }
  std::mutex mu_;
  std::vector<std::string> log_;
  int waits_ = 0;
  Seconds waited_{0};
};

TEST(ClientObserverTest, LabelsAreBounded) {
  struct Row {
    const char* what;
    std::string resource;
    std::string label;
  };
  const std::vector<Row> rows = {
      {"core kind", "pods", "pods"},
      {"workload kind", "deployments", "deployments"},
      {"review", "subjectaccessreviews", "subjectaccessreviews"},
      {"discovery documents", "discovery", "discovery"},
      {"a CRD the adapter discovered", "inferencepools", "other"},
      {"attacker-chosen text never becomes a label", "pods\"} 1\nx{", "other"},
  };
  for (const auto& row : rows) EXPECT_EQ(boundedResourceLabel(row.resource), row.label) << row.what;
  const std::vector<std::pair<int, std::string>> codes = {
      {200, "2xx"}, {201, "2xx"}, {304, "3xx"},  {404, "4xx"},  {429, "4xx"},
      {503, "5xx"}, {0, "error"}, {-1, "error"}, {600, "error"}};
  for (const auto& [code, label] : codes) EXPECT_EQ(codeClass(code), label) << code;
}

TEST(ClientObserverTest, RestClientReportsEachExchangeAndTheLimiter) {
  const auto pods = ResourceRef::collection("", "v1", "pods", "default");
  int throttled = 0;
  HttpTestServer server([&](const HttpTestRequest& request, HttpTestServer::Exchange& exchange) {
    if (request.target.find("/pods/missing") != std::string::npos) {
      return exchange.respond(404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
    }
    if (request.target.find("/pods/busy") != std::string::npos && throttled++ == 0) {
      return exchange.respond(429, R"({"kind":"Status","code":429})", {{"Retry-After", "1"}});
    }
    if (request.target.rfind("/apis/example.com/v1/namespaces/default/widgets", 0) == 0) {
      return exchange.respond(200, R"({"kind":"Widget"})");
    }
    if (request.target == "/apis") return exchange.respond(200, R"({"groups":[]})");
    exchange.respond(200, R"({"kind":"Pod","metadata":{"name":"x"}})");
  });
  auto observer = std::make_shared<RecordingObserver>();
  ClientConfig config;
  config.server = server.url();
  config.qps = 1000;
  config.burst = 1000;
  config.maxRetryAfter = std::chrono::seconds(1);
  config.observer = observer;
  auto client = RestKubeClient::create(config);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->observer(), observer);

  EXPECT_TRUE((*client)->get(pods.named("x")).ok());
  EXPECT_FALSE((*client)->get(pods.named("missing")).ok());
  EXPECT_TRUE((*client)->get(pods.named("busy")).ok());  // 429, then retried
  EXPECT_TRUE((*client)->patch(pods.named("x"), PatchType::kMerge, {{"a", 1}}).ok());
  EXPECT_TRUE(
      (*client)
          ->get(ResourceRef::collection("example.com", "v1", "widgets", "default").named("w"))
          .ok());
  EXPECT_TRUE((*client)->getPath("/apis").ok());
  EXPECT_EQ(observer->log(), (std::vector<std::string>{
                                 "request get pods 2xx",
                                 "request get pods 4xx",
                                 "request get pods 4xx",
                                 "request get pods 2xx",
                                 "request patch pods 2xx",
                                 "request get other 2xx",
                                 "request get discovery 2xx",
                             }));
  EXPECT_EQ(observer->waits(), 7);  // one rate-limiter token per exchange
  server.stop();
  EXPECT_FALSE((*client)->get(pods.named("x")).ok());
  EXPECT_EQ(observer->log().back(), "request get pods error");
}

TEST(ClientObserverTest, InformerReportsListsWatchesAndGone) {
  const auto pods = ResourceRef::collection("", "v1", "pods", "default");
  auto kube = std::make_shared<testing::FakeKubeClient>();
  auto observer = std::make_shared<RecordingObserver>();
  kube->setObserver(observer);
  ASSERT_TRUE(kube->create(pods, {{"metadata", {{"name", "a"}, {"namespace", "default"}}}}).ok());
  InformerOptions options;
  options.resource = pods;
  options.initialBackoff = std::chrono::milliseconds(10);
  Informer informer(kube, options);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(
      testing::waitUntil([&] { return kube->openWatches() == 1; }, std::chrono::seconds(10)));
  EXPECT_EQ(observer->count("listed pods"), 1u);
  EXPECT_EQ(observer->count("watch pods"), 1u);

  kube->endWatches();  // a stream that ends normally resumes without a LIST
  ASSERT_TRUE(testing::waitUntil([&] { return observer->count("watch pods") == 2; },
                                 std::chrono::seconds(10)));
  kube->endWatches(core::Status(410, "Expired", "too old resource version"));
  ASSERT_TRUE(testing::waitUntil([&] { return observer->count("watch pods") == 3; },
                                 std::chrono::seconds(10)));
  EXPECT_EQ(observer->count("gone pods"), 1u);
  EXPECT_EQ(observer->count("listed pods"), 2u);
  informer.stop();
}

double value(prometheus::Registry& registry, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      std::map<std::string, std::string> have;
      for (const auto& label : metric.label) have[label.name] = label.value;
      if (have != labels) continue;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          return metric.counter.value;
        case prometheus::MetricType::Gauge:
          return metric.gauge.value;
        case prometheus::MetricType::Histogram:
          return static_cast<double>(metric.histogram.sample_count);
        default:
          return -1;
      }
    }
  }
  return -1;
}

TEST(KubeClientMetricsTest, RegistersTheFamiliesWithTheirLabels) {
  auto registry = std::make_shared<prometheus::Registry>();
  KubeClientMetrics metrics(registry);
  metrics.requestDone("get", "pods", 200, ClientObserver::Seconds(0.01));
  metrics.requestDone("get", "pods", 200, ClientObserver::Seconds(0.02));
  metrics.requestDone("create", "subjectaccessreviews", 0, ClientObserver::Seconds(10));
  metrics.rateLimiterWaited(ClientObserver::Seconds(0.2));
  metrics.watchStarted("configmaps");
  metrics.watchStarted("configmaps");
  metrics.relistedAfterGone("configmaps");
  metrics.informerListed("configmaps");

  using Labels = std::map<std::string, std::string>;
  EXPECT_EQ(value(*registry, "gpuscale_kube_client_requests_total",
                  Labels{{"verb", "get"}, {"resource", "pods"}, {"code", "2xx"}}),
            2);
  EXPECT_EQ(
      value(*registry, "gpuscale_kube_client_requests_total",
            Labels{{"verb", "create"}, {"resource", "subjectaccessreviews"}, {"code", "error"}}),
      1);
  EXPECT_EQ(
      value(*registry, "gpuscale_kube_client_request_duration_seconds", Labels{{"verb", "get"}}),
      2);
  EXPECT_EQ(value(*registry, "gpuscale_kube_client_rate_limiter_wait_seconds", Labels{}), 1);
  EXPECT_EQ(value(*registry, "gpuscale_kube_client_watch_starts_total",
                  Labels{{"resource", "configmaps"}}),
            2);
  EXPECT_EQ(value(*registry, "gpuscale_kube_client_watch_relists_after_gone_total",
                  Labels{{"resource", "configmaps"}}),
            1);
  EXPECT_EQ(
      value(*registry, "gpuscale_kube_informer_lists_total", Labels{{"resource", "configmaps"}}),
      1);
  EXPECT_GT(value(*registry, "gpuscale_kube_informer_last_sync_timestamp_seconds",
                  Labels{{"resource", "configmaps"}}),
            1.7e9);  // a Unix time, not a duration
  const std::string exposition = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_NE(exposition.find("# TYPE gpuscale_kube_client_request_duration_seconds histogram"),
            std::string::npos);
}

}  // namespace client_metrics_test
}  // namespace gpuscale::kube
