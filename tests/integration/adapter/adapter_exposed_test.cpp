// gpuscale-adapter as an unauthenticated pod on the network would try it: requests that do not fit
// the server's limits (each limit one byte over and a megabyte over, and the 64 KiB header field
// that used to end the process) are answered 431/413 and counted while the program goes on serving.
// The adapter runs standalone against a stub Prometheus that answers discovery.
#include <gtest/gtest.h>

#include "adapter_process.h"
#include "support/pod_rules.h"
#include "support/prometheus_stub_server.h"
#include "support/request_limit_cases.h"
#include "support/tls_client.h"

namespace gpuscale::adapter::testing {
namespace {

using gpuscale::test::PrometheusStubServer;
using gpuscale::test::StubRequest;
using gpuscale::test::StubResponse;
using gpuscale::testing::TlsClient;
using namespace std::chrono_literals;

StubResponse discoveryOnly(const StubRequest& request) {
  if (auto discovery = gpuscale::test::podMetricDiscovery(request, "m")) return *discovery;
  StubResponse r;
  r.status = 404;
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
  PrometheusStubServer prometheus_{discoveryOnly};
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

}  // namespace
}  // namespace gpuscale::adapter::testing
