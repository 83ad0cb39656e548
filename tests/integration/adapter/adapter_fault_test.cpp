// gpuscale-adapter against a fake Prometheus that misbehaves on purpose: slow, HTTP 500, a matrix,
// a scalar, garbage, a 50 MB body. Each answer must be a Status naming the cause, and the adapter
// must keep serving. Also: many concurrent identical requests cost one Prometheus query per cache
// TTL.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "adapter_process.h"
#include "support/http_test_server.h"
#include "support/pod_rules.h"

namespace gpuscale::adapter::testing {
namespace adapter_fault_test {

const std::string kRules = gpuscale::testing::podSumRules("m");

constexpr char kNamed[] = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/p/m";

enum class Mode { kGood, kSlow, kHttp500, kMatrix, kScalar, kGarbage, kHuge };
// How the discovery calls (label APIs, and the /api/v1/series fallback) answer.
enum class DiscoveryMode { kGood, kHttp500AndHugeSeries, kGarbage, kSlow };

// The series fallback's cap the adapter runs with, and a series answer over it.
constexpr char kSeriesCap[] = "--prometheus-max-series-body-bytes=100000";
std::string hugeSeriesBody() {
  std::string body = R"({"status":"success","data":[)";
  for (int i = 0; i < 5000; ++i) {
    body += std::string(i ? "," : "") + R"({"__name__":"m","namespace":"default","pod":"p)" +
            std::to_string(i) + R"("})";
  }
  return body + "]}";
}

class FakePrometheus {
 public:
  FakePrometheus() : server_([this](const HttpTestRequest& request) { return answer(request); }) {}

  std::string url() const { return server_.url(); }
  void set(Mode mode) { mode_ = mode; }
  void set(DiscoveryMode mode) { discovery_ = mode; }
  size_t queries() const { return queries_; }

 private:
  HttpTestResponse answer(const HttpTestRequest& request) {
    HttpTestResponse r;
    bool discovery = request.path == "/api/v1/label/__name__/values" ||
                     request.path == "/api/v1/labels" || request.path == "/api/v1/series";
    if (discovery && discovery_.load() != DiscoveryMode::kGood) {
      switch (discovery_.load()) {
        case DiscoveryMode::kHttp500AndHugeSeries:
          if (request.path == "/api/v1/series") {
            r.body = hugeSeriesBody();
            r.chunked = true;
          } else {
            r.status = 500;
            r.contentType = "text/plain";
            r.body = "internal server error";
          }
          break;
        case DiscoveryMode::kGarbage:
          r.body = "<html>this is not JSON";
          break;
        case DiscoveryMode::kSlow:
          r.delay = std::chrono::seconds(5);
          r.body = R"({"status":"success","data":[]})";
          break;
        case DiscoveryMode::kGood:
          break;
      }
      return r;
    }
    if (auto answer = gpuscale::testing::podMetricDiscovery(request)) return *answer;
    if (request.path == "/api/v1/query") {
      ++queries_;
      switch (mode_.load()) {
        case Mode::kGood:
          r.body = gpuscale::testing::kPodMetricVector;
          break;
        case Mode::kSlow:
          r.delay = std::chrono::seconds(5);
          r.body = R"({"status":"success","data":{"resultType":"vector","result":[]}})";
          break;
        case Mode::kHttp500:
          r.status = 500;
          r.contentType = "text/plain";
          r.body = "internal server error";
          break;
        case Mode::kMatrix:
          r.body =
              R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"pod":"p"},"values":[[1714557600,"1"]]}]}})";
          break;
        case Mode::kScalar:
          r.body =
              R"({"status":"success","data":{"resultType":"scalar","result":[1714557600,"1"]}})";
          break;
        case Mode::kGarbage:
          r.body = "<html>this is not JSON";
          break;
        case Mode::kHuge:
          r.body = R"({"status":"success","data":{"resultType":"vector","result":[)" +
                   std::string(51u << 20, ' ') + "]}}";
          break;
      }
    } else {
      r.status = 404;
    }
    return r;
  }

  std::atomic<Mode> mode_{Mode::kGood};
  std::atomic<DiscoveryMode> discovery_{DiscoveryMode::kGood};
  std::atomic<size_t> queries_{0};
  HttpTestServer server_;
};

class AdapterFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    writeFile(dir_.file("rules.yaml"), kRules);
    adapter_ = std::make_unique<AdapterProcess>(
        dir_.file("rules.yaml"), prometheus_.url(),
        std::vector<std::string>{"--prometheus-timeout=1s", "--metrics-cache-ttl=0s", kSeriesCap});
    ASSERT_TRUE(gpuscale::testing::waitUntil(
        [&] { return curl(adapter_->url(kNamed)).code == 200; }, std::chrono::seconds(30)))
        << adapter_->log();
  }

  gpuscale::testing::TempDir dir_;
  FakePrometheus prometheus_;
  std::unique_ptr<AdapterProcess> adapter_;
};

TEST_F(AdapterFaultTest, EveryFaultIsAStatusAndTheAdapterKeepsServing) {
  struct Case {
    std::string what;
    Mode mode;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"slow: the timeout is honoured", Mode::kSlow, 503,
       "unable to fetch metrics: prometheus timeout"},
      {"HTTP 500", Mode::kHttp500, 500, "unable to fetch metrics: prometheus bad HTTP status"},
      {"matrix", Mode::kMatrix, 500, "unable to fetch metrics: prometheus unexpected result type"},
      {"scalar", Mode::kScalar, 500, "unable to fetch metrics: prometheus unexpected result type"},
      {"garbage JSON", Mode::kGarbage, 500, "unable to fetch metrics: prometheus bad JSON"},
      {"50 MB body", Mode::kHuge, 500, "unable to fetch metrics: prometheus body too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    prometheus_.set(c.mode);
    const auto start = std::chrono::steady_clock::now();
    HttpReply reply = curl(adapter_->url(kNamed));
    EXPECT_EQ(reply.code, c.code) << reply.body;
    EXPECT_NE(reply.body.find(c.message), std::string::npos) << reply.body;
    EXPECT_NE(reply.body.find(R"("kind":"Status")"), std::string::npos);
    if (c.mode == Mode::kSlow) {
      // Bounded by --prometheus-timeout, not by the 5 s the fake takes (a bound, not a benchmark).
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
    }
    EXPECT_EQ(curl(adapter_->url("/healthz")).code, 200);
    EXPECT_TRUE(adapter_->running());
  }
  prometheus_.set(Mode::kGood);
  HttpReply good = curl(adapter_->url(kNamed));
  EXPECT_EQ(good.code, 200);
  EXPECT_NE(good.body.find(R"("value":"1500m")"), std::string::npos) << good.body;
  // Per metric, by class: the slow answer timed out, the five others were bad responses.
  const std::string metrics = curl(adapter_->url("/metrics")).body;
  for (
      std::string line :
      {R"(gpuscale_adapter_metric_query_errors_total{class="timeout",metric="m",rule="rules[0]"} 1)",
       R"(gpuscale_adapter_metric_query_errors_total{class="bad_response",metric="m",rule="rules[0]"} 5)"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line;
  }
}

TEST_F(AdapterFaultTest, DiscoveryFaultsKeepTheLastGoodDiscovery) {
  // Each fault class of the discovery calls, as the adapter's /metrics counts them: HTTP 500 on the
  // label calls (then the series fallback's answer is over its cap), garbage on every call (label
  // calls and fallback), and a Prometheus too slow for --prometheus-timeout (transient: no
  // fallback).
  struct Case {
    std::string what;
    DiscoveryMode mode;
    std::string endpoint;
    std::string result;
  };
  const std::vector<Case> cases = {
      {"HTTP 500, then a series answer over its cap", DiscoveryMode::kHttp500AndHugeSeries,
       "series", "body too large"},
      {"HTTP 500 on the label calls", DiscoveryMode::kHttp500AndHugeSeries, "label_values",
       "bad HTTP status"},
      {"garbage JSON from the series fallback", DiscoveryMode::kGarbage, "series", "bad JSON"},
      {"slow label calls", DiscoveryMode::kSlow, "label_values", "timeout"},
  };
  const std::string discovery = "/apis/custom.metrics.k8s.io/v1beta1";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const double before = adapterCalls(curl(adapter_->url("/metrics")).body, c.endpoint, c.result);
    prometheus_.set(c.mode);
    // Relists run every second: wait for two failed ones of this class.
    std::string metrics;
    EXPECT_TRUE(gpuscale::testing::waitUntil(
        [&] {
          metrics = curl(adapter_->url("/metrics")).body;
          return adapterCalls(metrics, c.endpoint, c.result) >= before + 2;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(200)))
        << metrics;
    // The last good discovery is still served, queries still answer, the process is up.
    HttpReply listed = curl(adapter_->url(discovery));
    EXPECT_EQ(listed.code, 200);
    EXPECT_NE(listed.body.find(R"("name":"pods/m")"), std::string::npos) << listed.body;
    EXPECT_EQ(curl(adapter_->url(kNamed)).code, 200);
    EXPECT_EQ(curl(adapter_->url("/healthz")).code, 200);
    EXPECT_TRUE(adapter_->running());
    prometheus_.set(DiscoveryMode::kGood);
  }
  EXPECT_NE(adapter_->log().find("--prometheus-max-series-body-bytes"), std::string::npos)
      << "the log names the flag that caps the series answer:\n"
      << adapter_->log();
}

TEST_F(AdapterFaultTest, GracefulShutdownOnSigterm) {
  EXPECT_EQ(adapter_->stop(), std::optional<int>(0));
}

TEST(AdapterCoalescing, ConcurrentIdenticalRequestsCostOneQueryPerTtl) {
  gpuscale::testing::TempDir dir;
  FakePrometheus prometheus;
  writeFile(dir.file("rules.yaml"), kRules);
  AdapterProcess adapter(dir.file("rules.yaml"), prometheus.url(),
                         {"--metrics-cache-ttl=30s", "--workers=8"});
  ASSERT_TRUE(gpuscale::testing::waitUntil(
      [&] {
        return curl(adapter.url("/apis/custom.metrics.k8s.io/v1beta1")).body.find("pods/m") !=
               std::string::npos;
      },
      std::chrono::seconds(30)));
  const size_t before = prometheus.queries();
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 40; ++i) {
    clients.emplace_back([&] {
      if (curl(adapter.url(kNamed)).code == 200) ++ok;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(prometheus.queries() - before, 1u);
}

}  // namespace adapter_fault_test
}  // namespace gpuscale::adapter::testing
