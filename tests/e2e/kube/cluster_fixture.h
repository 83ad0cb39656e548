// Shared by the kube/auth end-to-end cases: where the test cluster is (run_e2e.sh passes its
// directory in GPUSCALE_TEST_CLUSTER_DIR), kubectl and admin-client helpers, and the fixture that
// creates the test namespace.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "fakes/fake_metrics_provider.h"
#include "fakes/test_pki.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/auth/delegation_options.h"
#include "gpuscale/auth/token_reviewer.h"
#include "gpuscale/kube/discovery.h"
#include "gpuscale/kube/informer.h"
#include "support/http_test_server.h"
#include "support/process.h"
#include "support/tls_client.h"
#include "support/wait_until.h"

namespace gpuscale::e2e {

using kube::Object;
using kube::ResourceRef;
using std::chrono::seconds;

inline constexpr const char* kNs = "kube-e2e";

inline std::string env(const char* name, const char* fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}
inline std::string clusterDir() { return env("GPUSCALE_TEST_CLUSTER_DIR"); }
inline std::string kubeconfig() { return clusterDir() + "/kubeconfig"; }
inline std::string pki(const std::string& file) { return clusterDir() + "/pki/" + file; }

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline testing::ProcessResult kubectl(std::vector<std::string> args,
                                      const std::string& input = "") {
  std::vector<std::string> argv = {env("GPUSCALE_KUBECTL", "kubectl"), "--kubeconfig",
                                   kubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::runProcess(argv, std::chrono::seconds(60), input);
}

inline void apply(const std::string& yaml) {
  auto result = kubectl({"apply", "-f", "-"}, yaml);
  ASSERT_EQ(result.exitCode, 0) << result.err;
}

inline std::shared_ptr<kube::RestKubeClient> adminClient() {
  auto config = kube::loadKubeconfig(kubeconfig());
  EXPECT_TRUE(config.ok()) << config.status().toString();
  config->qps = 0;
  auto client = kube::RestKubeClient::create(*config);
  EXPECT_TRUE(client.ok()) << client.status().toString();
  return *client;
}

inline std::string serviceAccountToken(const std::string& account) {
  kubectl({"-n", kNs, "create", "serviceaccount", account});  // AlreadyExists is fine
  auto token = kubectl({"-n", kNs, "create", "token", account});
  EXPECT_EQ(token.exitCode, 0) << token.err;
  std::string text = token.out;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Points APIService v1beta1.custom.metrics.k8s.io at a server on loopback `port` through the
// ExternalName Service `service` of kube-e2e (kube-apiserver dials https://localhost:<port>; the
// manifest is tests/e2e/lib/custom_metrics_apiservice.sh's, without a CA bundle), then waits until
// the aggregator reports it Available; the result is that of `kubectl wait`.
inline testing::ProcessResult registerCustomMetricsApiService(const std::string& service,
                                                              uint16_t port) {
  auto manifest = testing::runProcess(
      {"bash", GPUSCALE_SOURCE_DIR "/tests/e2e/lib/custom_metrics_apiservice.sh", service, kNs,
       std::to_string(port)});
  EXPECT_EQ(manifest.exitCode, 0) << manifest.err;
  apply(manifest.out);
  return kubectl({"wait", "--for=condition=Available", "apiservice/v1beta1.custom.metrics.k8s.io",
                  "--timeout=120s"});
}

inline const ResourceRef kConfigMaps = ResourceRef::collection("", "v1", "configmaps", kNs);

inline Object configMap(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", {{"app", "e2e"}}}}},
          {"data", {{"k", "v"}}}};
}

class ClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_FALSE(clusterDir().empty()) << "run through run_e2e.sh";
    kubectl({"create", "namespace", kNs});
  }
};

}  // namespace gpuscale::e2e
