// gpuscale-adapter under overload, against a fake Prometheus whose queries hang until the test lets
// them go: health probes are answered while every in-flight slot is held by a slow request, the
// request beyond --max-requests-inflight gets a 429 Status with Retry-After, and a request past
// --request-timeout gets a 504 Status. Outcomes only (codes, bodies, order of completion): no
// timing thresholds.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>

#include "adapter_process.h"
#include "support/free_port.h"
#include "support/http_test_server.h"
#include "support/pod_rules.h"
#include "support/tls_client.h"

namespace gpuscale::adapter::testing {
namespace adapter_overload_test {

using namespace std::chrono_literals;

constexpr char kNamed[] = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/p/m";

// A Prometheus whose instant queries wait for open() (discovery answers at once).
class GatedPrometheus {
 public:
  GatedPrometheus() : server_([this](const HttpTestRequest& request) { return answer(request); }) {}
  ~GatedPrometheus() {
    open();
    server_.stop();
  }

  std::string url() const { return server_.url(); }
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  int waiting() const { return waiting_.load(); }

 private:
  HttpTestResponse answer(const HttpTestRequest& request) {
    if (auto discovery = gpuscale::testing::podMetricDiscovery(request)) return *discovery;
    HttpTestResponse r;
    if (request.path == "/api/v1/query") {
      std::unique_lock lock(mutex_);
      ++waiting_;
      opened_.wait_for(lock, 300s, [this] { return open_; });
      --waiting_;
      r.body = gpuscale::testing::kPodMetricVector;
    } else {
      r.status = 404;
    }
    return r;
  }

  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = true;
  std::atomic<int> waiting_{0};
  HttpTestServer server_;
};

// The value of an unlabelled sample `name` in a text exposition (-1 when absent).
double gauge(const std::string& exposition, const std::string& name) {
  const std::string prefix = "\n" + name + " ";
  const size_t at = exposition.find(prefix);
  if (at == std::string::npos) return -1;
  return std::strtod(exposition.c_str() + at + prefix.size(), nullptr);
}

// curl with a long limit: slow requests must outlive every step of the test.
std::future<HttpReply> slowRequest(const std::string& url) {
  return std::async(std::launch::async, [url] { return curl(url, 240); });
}

class AdapterOverloadTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extraArgs) {
    writeFile(dir_.file("rules.yaml"), gpuscale::testing::podSumRules("m"));
    metricsAddress_ = "127.0.0.1:" + std::to_string(gpuscale::testing::freeLoopbackPort());
    extraArgs.insert(extraArgs.end(), {"--metrics-cache-ttl=0s", "--prometheus-timeout=200s",
                                       "--metrics-bind-address=" + metricsAddress_});
    adapter_ =
        std::make_unique<AdapterProcess>(dir_.file("rules.yaml"), prometheus_.url(), extraArgs);
    ASSERT_TRUE(
        gpuscale::testing::waitUntil([&] { return curl(adapter_->url(kNamed)).code == 200; }, 60s))
        << adapter_->log();
  }
  // /metrics of the plain listener, which never waits for a slot.
  std::string metrics() const {
    return runProcess({"curl", "-s", "-m", "20", "http://" + metricsAddress_ + "/metrics"}).out;
  }
  uint16_t port() const {
    const std::string url = adapter_->url("");
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }

  gpuscale::testing::TempDir dir_;
  GatedPrometheus prometheus_;
  std::string metricsAddress_;
  std::unique_ptr<AdapterProcess> adapter_;
};

TEST_F(AdapterOverloadTest, HealthIsAnsweredAndExcessRequestsGet429WhileSlotsAreHeld) {
  start({"--workers=2", "--max-requests-inflight=3"});
  prometheus_.close();
  // Three slow requests: two hold the handler threads, the third waits for one; all hold a slot.
  std::vector<std::future<HttpReply>> slow;
  for (int i = 0; i < 3; ++i) slow.push_back(slowRequest(adapter_->url(kNamed)));
  std::string exposition;
  ASSERT_TRUE(gpuscale::testing::waitUntil(
      [&] {
        exposition = metrics();
        return gauge(exposition, "gpuscale_apiserver_admitted_requests") == 3 &&
               prometheus_.waiting() >= 1;
      },
      120s, 50ms))
      << exposition << adapter_->log();

  // Health probes are answered now, while the slow requests are still waiting for Prometheus.
  for (const std::string path : {"/healthz", "/livez", "/readyz", "/readyz?verbose"}) {
    EXPECT_EQ(curl(adapter_->url(path)).code, 200) << path;
  }
  // Beyond the limit: 429 with Retry-After and a Kubernetes Status.
  gpuscale::testing::TlsClient client(port());
  auto rejected = client.get(kNamed);
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 429);
  EXPECT_NE(rejected->headers.find("Retry-After: 1"), std::string::npos) << rejected->headers;
  EXPECT_NE(rejected->body.find(R"("kind":"Status")"), std::string::npos) << rejected->body;
  EXPECT_NE(rejected->body.find(R"("reason":"TooManyRequests")"), std::string::npos)
      << rejected->body;
  EXPECT_NE(rejected->body.find(R"("code":429)"), std::string::npos) << rejected->body;
  // Health was answered before any slow request finished.
  for (auto& request : slow) EXPECT_EQ(request.wait_for(0s), std::future_status::timeout);

  prometheus_.open();
  for (auto& request : slow) EXPECT_EQ(request.get().code, 200);
  // The slots are free again.
  EXPECT_EQ(curl(adapter_->url(kNamed)).code, 200);
  exposition = metrics();
  EXPECT_GE(gauge(exposition, "gpuscale_apiserver_rejected_requests_total"), 1) << exposition;
  EXPECT_EQ(gauge(exposition, "gpuscale_apiserver_admitted_requests"), 0) << exposition;
  const std::string log = adapter_->log();
  const std::string warning = "(--max-requests-inflight): answering 429";
  EXPECT_NE(log.find(warning), std::string::npos) << log;
  EXPECT_EQ(log.find(warning), log.rfind(warning)) << "logged more than once:\n" << log;
}

TEST_F(AdapterOverloadTest, RequestPastTheTimeoutGets504AndTheServerGoesOn) {
  start({"--workers=2", "--request-timeout=1s"});
  prometheus_.close();
  const HttpReply timedOut = curl(adapter_->url(kNamed));
  EXPECT_EQ(timedOut.code, 504) << timedOut.body;
  EXPECT_NE(timedOut.body.find(R"("reason":"Timeout")"), std::string::npos) << timedOut.body;
  EXPECT_EQ(curl(adapter_->url("/healthz")).code, 200);
  prometheus_.open();
  EXPECT_EQ(curl(adapter_->url(kNamed)).code, 200);
  EXPECT_GE(gauge(metrics(), "gpuscale_apiserver_request_timeouts_total"), 1);
}

TEST(AdapterOverloadFlags, BadValuesAreRejected) {
  for (const std::string flag :
       {"--max-requests-inflight=-1", "--max-connections=many", "--request-timeout=soon"}) {
    const auto result =
        runProcess({binary("gpuscale-adapter"), "--config", "/nonexistent", "--standalone", flag});
    EXPECT_EQ(result.exitCode, 2) << flag << ": " << result.err;
    EXPECT_NE(result.err.find(flag.substr(2, flag.find('=') - 2)), std::string::npos) << result.err;
  }
}

}  // namespace adapter_overload_test
}  // namespace gpuscale::adapter::testing
