// The fixture server (gpuscale-fixture-apiserver: the real server over fake providers) as a
// separate process, talked to by real clients: kubectl get --raw, curl, the Python Kubernetes
// client, hey; and stopped with SIGTERM while a request is in flight.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include "support/free_port.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace gpuscale::apiserver {
namespace clients_test {

using namespace std::chrono_literals;
using testing::runProcess;

constexpr const char* kWildcard =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us";

class ClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* binaryDir = std::getenv("GPUSCALE_BINARY_DIR");
    ASSERT_NE(binaryDir, nullptr) << "run through ctest";
    port_ = testing::freeLoopbackPort();
    server_ = std::make_unique<testing::BackgroundProcess>(
        std::vector<std::string>{std::string(binaryDir) + "/bin/gpuscale-fixture-apiserver",
                                 "--secure-port=" + std::to_string(port_),
                                 "--bind-address=127.0.0.1", "--cert-dir=" + dir_.file("certs"),
                                 "--worker-threads=2", "--shutdown-timeout=10s",
                                 "--slow-delay=1500ms"},
        dir_.file("server.log"));
    const bool up = testing::waitUntil(
        [this] {
          return curl({"-o", "/dev/null", "-w", "%{http_code}", url("/healthz")}).out == "200";
        },
        30s, 50ms);
    ASSERT_TRUE(up) << server_->log();
  }

  std::string url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(port_) + path;
  }

  testing::ProcessResult curl(std::vector<std::string> args) const {
    args.insert(args.begin(), {"curl", "-sk", "-A", "test-client"});
    return runProcess(args);
  }

  testing::ProcessResult kubectl(const std::string& path) const {
    return runProcess({"kubectl", "--kubeconfig=/dev/null", "--server", url(""),
                       "--insecure-skip-tls-verify", "--token=x", "get", "--raw", path});
  }

  testing::TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<testing::BackgroundProcess> server_;
};

TEST_F(ClientsTest, KubectlGetRaw) {
  if (!testing::programAvailable("kubectl")) GTEST_SKIP() << "kubectl not installed";
  const auto discovery = kubectl("/apis/custom.metrics.k8s.io/v1beta1");
  ASSERT_EQ(discovery.exitCode, 0) << discovery.err;
  EXPECT_EQ(
      discovery.out,
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"custom.metrics.k8s.io/v1beta1","resources":[{"name":"pods/avg_time_queue_us","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]},{"name":"namespaces/avg_time_queue_us","singularName":"","namespaced":false,"kind":"MetricValueList","verbs":["get"]},{"name":"nodes/gpu_utilization","singularName":"","namespaced":false,"kind":"MetricValueList","verbs":["get"]},{"name":"deployments.apps/requests_per_second","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]},{"name":"pods/broken_metric","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]},{"name":"pods/slow_metric","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]}]})"
      "\n");
  const auto pods = kubectl(std::string(kWildcard) + "?labelSelector=app%3Dtriton");
  ASSERT_EQ(pods.exitCode, 0) << pods.err;
  EXPECT_EQ(
      pods.out,
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"triton-0","apiVersion":"/v1"},"metricName":"avg_time_queue_us","timestamp":"2024-05-01T10:00:00Z","value":"399300m","selector":null},{"describedObject":{"kind":"Pod","namespace":"default","name":"triton-1","apiVersion":"/v1"},"metricName":"avg_time_queue_us","timestamp":"2024-05-01T10:00:00Z","value":"0","selector":null},{"describedObject":{"kind":"Pod","namespace":"default","name":"triton-2","apiVersion":"/v1"},"metricName":"avg_time_queue_us","timestamp":"2024-05-01T10:00:00Z","value":"4275m","selector":null}]})"
      "\n");
  const auto v2 = kubectl(
      "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/deployments.apps/triton/"
      "requests_per_second");
  ASSERT_EQ(v2.exitCode, 0) << v2.err;
  EXPECT_NE(
      v2.out.find(
          R"("describedObject":{"kind":"Deployment","namespace":"default","name":"triton","apiVersion":"apps/v1"},"metric":{"name":"requests_per_second","selector":null})"),
      std::string::npos);
  const auto node = kubectl("/apis/custom.metrics.k8s.io/v1beta1/nodes/node-a/gpu_utilization");
  EXPECT_NE(node.out.find(R"("value":"870m")"), std::string::npos) << node.err;
  const auto external =
      kubectl("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_depth");
  EXPECT_NE(external.out.find(R"("metricLabels":{"topic":"t1"})"), std::string::npos)
      << external.err;
}

TEST_F(ClientsTest, KubectlReportsStatusErrors) {
  if (!testing::programAvailable("kubectl")) GTEST_SKIP() << "kubectl not installed";
  const auto unknown =
      kubectl("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/nope");
  EXPECT_NE(unknown.exitCode, 0);
  EXPECT_NE(unknown.err.find("the server could not find the metric nope for pods"),
            std::string::npos)
      << unknown.err;
  const auto unroutable = kubectl("/apis/custom.metrics.k8s.io/v1beta1/a/b");
  EXPECT_NE(unroutable.exitCode, 0);
  EXPECT_NE(unroutable.err.find("NotFound"), std::string::npos) << unroutable.err;
  const auto broken =
      kubectl("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/broken_metric");
  EXPECT_NE(broken.err.find("unable to fetch metrics"), std::string::npos) << broken.err;
}

struct CurlRow {
  const char* what;
  std::vector<std::string> args;  // before the URL
  std::string path;
  std::string code;
  std::string bodyPrefix;
};

TEST_F(ClientsTest, CurlBadPathsMethodsAndSizes) {
  const std::vector<CurlRow> rows = {
      {"unroutable path under a prefix",
       {},
       "/apis/custom.metrics.k8s.io/v1beta1/a/b",
       "404",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404})"},
      {"path outside every prefix", {}, "/foo", "404", "404 page not found\n"},
      {"OpenAPI v2 for the aggregator", {}, "/openapi/v2", "200", R"({"swagger":"2.0",)"},
      {"OpenAPI v3 of a group-version not served",
       {},
       "/openapi/v3/apis/apps/v1",
       "404",
       "404 page not found\n"},
      {"short path",
       {},
       "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/metrics",
       "400",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid request path","reason":"BadRequest","code":400})"},
      {"POST on a metric",
       {"-X", "POST"},
       kWildcard,
       "405",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource")"},
      {"DELETE on discovery",
       {"-X", "DELETE"},
       "/apis/custom.metrics.k8s.io/v1beta2",
       "405",
       R"({"kind":"Status")"},
      {"bad labelSelector",
       {},
       std::string(kWildcard) + "?labelSelector=%3D%3D%3D",
       "400",
       R"({"kind":"Status")"},
      {"aggregated discovery Accept",
       {"-H", "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
       "/apis",
       "406",
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"only the following media types are accepted)"},
      {"readyz verbose",
       {},
       "/readyz?verbose",
       "200",
       "[+]ping ok\n[+]shutdown ok\nreadyz check passed\n"},
      {"version", {}, "/version", "200", "{\n  \"major\": "},
      {"metrics", {}, "/metrics", "200", "# HELP gpuscale_"},
      {"curl user agent pretty-prints",
       {"-A", "curl/8.0"},
       "/apis/custom.metrics.k8s.io",
       "200",
       "{\n  \"kind\": \"APIGroup\",\n  \"apiVersion\": \"v1\",\n  \"name\": "
       "\"custom.metrics.k8s.io\""},
  };
  for (const auto& row : rows) {
    std::vector<std::string> args = row.args;
    const std::string bodyFile = dir_.file("body");
    args.insert(args.end(), {"-o", bodyFile, "-w", "%{http_code}", url(row.path)});
    const auto result = curl(args);
    EXPECT_EQ(result.out, row.code) << row.what << ": " << result.err;
    std::ifstream in(bodyFile);
    const std::string body(std::istreambuf_iterator<char>(in), {});
    EXPECT_EQ(body.substr(0, row.bodyPrefix.size()), row.bodyPrefix) << row.what;
  }
}

// Over the server's 1 MiB header limit. Such arguments exceed curl's limits, so Python's
// http.client sends them.
TEST_F(ClientsTest, HugeHeadersAndUrlsGet431) {
  if (!testing::programAvailable("/usr/bin/python3")) GTEST_SKIP() << "python3 not installed";
  const std::string script = R"(
import http.client, ssl, sys
def status(path, headers):
    conn = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ssl._create_unverified_context())
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    return "%d %s" % (resp.status, resp.read().decode())
print(status("/healthz", {"X-Big": "h" * (1100 * 1024)}))
print(status("/apis/" + "u" * (1100 * 1024), {}))
)";
  const auto result = runProcess({"/usr/bin/python3", "-c", script, std::to_string(port_)});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(result.out,
            "431 431 Request Header Fields Too Large\n431 431 Request Header Fields Too Large\n");
  EXPECT_EQ(curl({"-o", "/dev/null", "-w", "%{http_code}", url("/healthz")}).out, "200");
}

TEST_F(ClientsTest, PythonKubernetesClientVerifiesTheGeneratedCertificate) {
  if (!testing::programAvailable("/usr/bin/python3")) GTEST_SKIP() << "python3 not installed";
  const std::string script = R"(
import json, sys
from kubernetes import client
cfg = client.Configuration()
cfg.host = sys.argv[1]
cfg.ssl_ca_cert = sys.argv[2]
cfg.api_key = {"authorization": "Bearer x"}
api = client.ApiClient(cfg)
resp = api.call_api(sys.argv[3], "GET", auth_settings=["BearerToken"], _preload_content=False)
body = resp[0].data.decode()
doc = json.loads(body)
print(resp[0].status, doc["kind"], ",".join(i["describedObject"]["name"] + "=" + i["value"] for i in doc["items"]))
)";
  const auto result =
      runProcess({"/usr/bin/python3", "-c", script, url(""), dir_.file("certs/apiserver.crt"),
                  std::string(kWildcard) + "?labelSelector=app%3Dtriton"});
  if (result.err.find("No module named 'kubernetes'") != std::string::npos) {
    GTEST_SKIP() << "python3-kubernetes not installed";
  }
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(result.out, "200 MetricValueList triton-0=399300m,triton-1=0,triton-2=4275m\n");
}

TEST_F(ClientsTest, HeyManyConcurrentKeepAliveClients) {
  if (!testing::programAvailable("hey")) GTEST_SKIP() << "hey not installed";
  const auto result = runProcess({"hey", "-n", "3000", "-c", "50", "-H", "Authorization: Bearer x",
                                  url(std::string(kWildcard) + "?labelSelector=app%3Dtriton")},
                                 120s);
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("[200]\t3000 responses"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("Error distribution"), std::string::npos) << result.out;
}

TEST_F(ClientsTest, SigtermFinishesTheInFlightRequestAndExitsCleanly) {
  auto inFlight = std::async(std::launch::async, [this] {
    return curl(
        {"-w", " %{http_code}",
         url("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/triton-0/slow_metric")});
  });
  // Wait until the slow request is inside the handler (it takes 1.5 s), then ask the server to
  // stop.
  std::this_thread::sleep_for(500ms);
  server_->signal(SIGTERM);
  const auto response = inFlight.get();
  EXPECT_EQ(response.out.substr(response.out.size() - 4), " 200") << response.out << response.err;
  EXPECT_NE(response.out.find(R"("metricName":"slow_metric")"), std::string::npos);
  const auto exitCode = server_->wait(20s);
  ASSERT_TRUE(exitCode.has_value()) << server_->log();
  EXPECT_EQ(*exitCode, 0) << server_->log();
  EXPECT_NE(server_->log().find("shutting down"), std::string::npos);
  EXPECT_NE(curl({"-o", "/dev/null", url("/healthz")}).exitCode, 0);
}

}  // namespace clients_test
}  // namespace gpuscale::apiserver
