// gpuscale-adapter as an unauthenticated pod on the network would try it: requests that do not fit
// the server's limits (each limit one byte over and a megabyte over, and the 64 KiB header field
// that used to end the process) are answered 431/413 and counted while the program goes on
// serving; a flood of its plain listener leaves the HTTPS port serving. The adapter runs
// standalone against a stub Prometheus that answers discovery and queries.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <iostream>

#include "adapter_process.h"
#include "support/free_port.h"
#include "support/http_test_server.h"
#include "support/pod_rules.h"
#include "support/request_limit_cases.h"
#include "support/tls_client.h"

namespace gpuscale::adapter::testing {
namespace adapter_exposed_test {

using namespace std::chrono_literals;

HttpTestResponse discoveryOnly(const HttpTestRequest& request) {
  if (auto discovery = gpuscale::testing::podMetricDiscovery(request)) return *discovery;
  HttpTestResponse r;
  if (request.path == "/api/v1/query") {
    r.body = gpuscale::testing::kPodMetricVector;
  } else {
    r.status = 404;
  }
  return r;
}

class AdapterExposedTest : public ::testing::Test {
 protected:
  void SetUp() override { writeFile(dir_.file("rules.yaml"), gpuscale::testing::podSumRules("m")); }
  void start(std::vector<std::string> extraArgs = {}) {
    adapter_ =
        std::make_unique<AdapterProcess>(dir_.file("rules.yaml"), prometheus_.url(), extraArgs);
    ASSERT_TRUE(adapter_->running()) << adapter_->log();
    port_ = adapter_->port();
  }

  gpuscale::testing::TempDir dir_;
  HttpTestServer prometheus_{HttpTestServer::ResponseHandler(discoveryOnly)};
  std::unique_ptr<AdapterProcess> adapter_;
  uint16_t port_ = 0;
};

TEST_F(AdapterExposedTest, NoRequestEndsTheProcess) {
  start();
  // The request that ended the process: one header field of 64 KiB (Beast's field storage threw
  // std::length_error out of the read handler).
  for (const std::string& field :
       {"X-Big: " + std::string(64 << 10, 'a') + "\r\n", std::string(70 << 10, 'N') + ": v\r\n"}) {
    TlsClient client(port_);
    client.send("GET /apis/custom.metrics.k8s.io/v1beta1 HTTP/1.1\r\nHost: x\r\n" + field + "\r\n");
    auto reply = client.readReply(30s);
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 431);
    EXPECT_TRUE(client.closedByPeer(30s));
    ASSERT_TRUE(adapter_->running()) << adapter_->log();
  }
  for (const auto& row : gpuscale::testing::requestLimitCases(apiserver::RequestLimits{})) {
    TlsClient client(port_);
    client.send(row.bytes);
    auto reply = client.readReply(30s);
    ASSERT_TRUE(reply) << row.name << "\n" << adapter_->log();
    EXPECT_EQ(reply->status, row.status) << row.name;
    ASSERT_TRUE(adapter_->running()) << row.name << "\n" << adapter_->log();
  }
  EXPECT_EQ(curl(adapter_->url("/healthz")).code, 200);
  const std::string metrics = curl(adapter_->url("/metrics")).body;
  EXPECT_GE(sumOf(metrics, "gpuscale_apiserver_refused_requests_total",
                  {R"(listener="secure")", R"(limit="header_field_bytes")"}),
            2)
      << metrics;
  EXPECT_GE(sumOf(metrics, "gpuscale_apiserver_refused_requests_total", {R"(limit="body_bytes")"}),
            4)
      << metrics;
  EXPECT_NE(adapter_->log().find("gpuscale_apiserver_refused_requests_total"), std::string::npos);
}

// The plain /metrics listener flooded beyond its cap (from several source addresses, as many
// pods would) while the HTTPS port keeps answering probes and custom-metrics requests: each
// listener has its own cap. Before, both listeners shared --max-connections, so a plain flood of
// that size made the HTTPS port close every new connection.
TEST_F(AdapterExposedTest, APlainFloodLeavesTheHttpsPortServing) {
  const std::string metrics = "127.0.0.1:" + std::to_string(gpuscale::testing::freeLoopbackPort());
  start({"--metrics-bind-address=" + metrics, "--max-connections=40",
         "--metrics-max-connections=20", "--probe-connections=4"});
  const uint16_t plainPort = static_cast<uint16_t>(std::stoi(metrics.substr(10)));
  std::vector<std::unique_ptr<TlsClient>> flood;
  int served = 0;
  int answered503 = 0;
  for (int i = 0; i < 60; ++i) {
    gpuscale::testing::ClientOptions plain;
    plain.tls = false;
    plain.sourceAddress = "127.0.0." + std::to_string(2 + i % 6);
    auto client = std::make_unique<TlsClient>(plainPort, plain);
    // Each keeps its connection after one request (keep-alive), as a scraper would.
    auto reply = client->get("/metrics");
    if (reply && reply->status == 200) ++served;
    if (reply && reply->status == 503) ++answered503;
    flood.push_back(std::move(client));
  }
  EXPECT_EQ(served, 20);  // the cap; the others were closed or answered 503 in the probe room
  // The HTTPS port: a probe and a custom-metrics request, each on a new connection.
  auto healthz = curl(adapter_->url("/healthz"));
  EXPECT_EQ(healthz.code, 200);
  auto list = curl(adapter_->url("/apis/custom.metrics.k8s.io/v1beta1"));
  EXPECT_EQ(list.code, 200) << list.body;
  auto values =
      curl(adapter_->url("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/m"));
  EXPECT_EQ(values.code, 200) << values.body;
  EXPECT_NE(values.body.find(R"("kind":"MetricValueList")"), std::string::npos) << values.body;
  const std::string exposition = curl(adapter_->url("/metrics")).body;
  // Beyond the plain cap, the room kept for probes answered the scrapes 503 and closed them; a
  // connection that arrived while the room was still held by closing ones was closed at once.
  // Each of the 40 is counted one way or the other, before the client sees it.
  EXPECT_GT(answered503, 0);
  EXPECT_EQ(sumOf(exposition, "gpuscale_apiserver_refused_requests_total",
                  {R"(listener="plain")", R"(limit="not_probe")"}),
            answered503)
      << exposition;
  EXPECT_EQ(
      sumOf(exposition, "gpuscale_apiserver_rejected_connections_total", {R"(listener="plain")"}),
      40 - answered503)
      << exposition;
  EXPECT_EQ(
      sumOf(exposition, "gpuscale_apiserver_rejected_connections_total", {R"(listener="secure")"}),
      0)
      << exposition;
}

// The resident set of process `pid` in bytes (VmRSS), 0 when unknown.
size_t residentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// A thousand keep-alive TLS connections that each sent the largest request the limits allow (a
// 32 KiB head and a 4 KiB body) and stay open: the adapter gives each request's buffers back, and
// an idle TLS connection holds no record buffers, so they cost tens of megabytes, not hundreds
// (before: 89 MiB for a thousand idle connections that had sent small requests, since Asio's TLS
// stream keeps 68 KiB of buffers per connection), and /healthz is answered beside them.
TEST_F(AdapterExposedTest, AThousandIdleConnectionsAfterMaximalRequestsStayCheap) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 4096 && files.rlim_max >= 4096) {
    files.rlim_cur = 4096;  // both ends of 1,000 connections: this process and the adapter
    setrlimit(RLIMIT_NOFILE, &files);
  }
  if (files.rlim_cur < 2200) GTEST_SKIP() << "needs 2,200 open files";
  start();
  const size_t before = residentBytes(adapter_->pid());
  ASSERT_GT(before, 0u);
  const apiserver::RequestLimits limits;
  const std::string length = "Content-Length: " + std::to_string(limits.bodyBytes) + "\r\n";
  const std::string head = gpuscale::testing::requestBytes(
      "/healthz",
      length + gpuscale::testing::paddingFields(8, limits.headerBytes - length.size(), "/healthz"));
  ASSERT_EQ(head.size(), limits.headerBytes);
  const std::string maximal = head + std::string(limits.bodyBytes, 'b');
  std::vector<std::unique_ptr<TlsClient>> clients;
  for (int i = 0; i < 1000; ++i) {
    gpuscale::testing::ClientOptions options;
    options.sourceAddress = "127.0.0." + std::to_string(2 + i % 5);  // 200 per address
    auto client = std::make_unique<TlsClient>(port_, options);
    ASSERT_TRUE(client->send(maximal)) << i;
    auto reply = client->readReply(60s);
    ASSERT_TRUE(reply) << i;
    ASSERT_EQ(reply->status, 200) << i;
    clients.push_back(std::move(client));
  }
  const size_t after = residentBytes(adapter_->pid());
  std::cout << "adapter resident: " << (before >> 20) << " MiB before, " << (after >> 20)
            << " MiB with 1,000 idle TLS connections after maximal requests\n";
  EXPECT_LT(after, size_t{200} << 20) << "resident " << (after >> 20) << " MiB";
  EXPECT_LT(after - std::min(after, before), size_t{64} << 20)
      << "a thousand idle TLS connections cost " << ((after - before) >> 20) << " MiB";
  // A generous client timeout: a server wedged by the connections would miss it.
  EXPECT_EQ(curl(adapter_->url("/healthz"), 30).code, 200);
  for (auto& client : clients) {
    auto again = client->get("/healthz");  // every connection is still served
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 200);
  }
}

}  // namespace adapter_exposed_test
}  // namespace gpuscale::adapter::testing
