// The real gpuscale-adapter against the REAL control plane of tests/cluster, started with NO
// client-CA flags: it takes the front-proxy CA (and the client CA) from the real
// kube-system/extension-apiserver-authentication ConfigMap, names them in its TLS
// CertificateRequest, and authenticates kube-apiserver's aggregator (front-proxy client
// certificate + X-Remote-User) as the forwarded user. Then the ConfigMap's request-header CA is
// changed under it: a CA added to the bundle is accepted, and after the bundle is replaced by a new
// CA, certificates of the replaced CA are refused while those of the new CA pass, and new TLS
// connections are asked for the new CA. Its /metrics shows the TLS reloads and the kube client's
// traffic.
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <csignal>
#include <regex>

#include "e2e/kube/cluster_fixture.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gpuscale::e2e {
namespace {

using std::chrono::milliseconds;

std::string commonNameOf(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  char text[256] = {};
  if (cert != nullptr) {
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, text, sizeof text);
  }
  X509_free(cert);
  return text;
}

// gpuscale-adapter in in-cluster mode on a port it picks itself (read back from its log).
class AdapterProcess {
 public:
  AdapterProcess() {
    process_ = std::make_unique<testing::BackgroundProcess>(
        std::vector<std::string>{
            GPUSCALE_ADAPTER_BINARY, "serve", "--config", GPUSCALE_SOURCE_DIR "/rules/triton.yaml",
            // Nothing listens there: discovery stays empty, which the aggregator does not mind.
            "--prometheus-url", "http://127.0.0.1:1", "--bind-address", "127.0.0.1",
            "--secure-port", "0", "--cert-dir", dir_.file("certs"), "--lister-kubeconfig",
            kubeconfig(), "--authentication-kubeconfig", kubeconfig(), "--authorization-kubeconfig",
            kubeconfig()},
        dir_.file("adapter.log"));
    const std::regex serving(R"(serving HTTPS on 127\.0\.0\.1:(\d+))");
    testing::waitUntil(
        [&] {
          std::smatch match;
          const std::string log = process_->log();
          if (std::regex_search(log, match, serving)) port_ = std::stoi(match[1]);
          return port_ != 0 || !process_->running();
        },
        seconds(60), milliseconds(100));
  }
  ~AdapterProcess() {
    process_->signal(SIGTERM);
    process_->wait(seconds(30));
  }
  uint16_t port() const { return port_; }
  std::string log() const { return process_->log(); }

 private:
  testing::TempDir dir_;
  std::unique_ptr<testing::BackgroundProcess> process_;
  uint16_t port_ = 0;
};

testing::ClientCertificate frontProxyClientOf(const testing::TestCertificate& ca) {
  testing::CertificateSpec spec;
  spec.commonName = "front-proxy-client";  // the ConfigMap's allowed name
  const auto cert = testing::makeCertificate(spec, &ca);
  return {cert.certificatePem, cert.privateKeyPem};
}

constexpr const char* kMetricPath =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/kube-e2e/pods/*/queue_time";

// The status of a metric request as "alice" vouched for by `certificate`: 403 (authenticated as
// alice, denied by the SubjectAccessReview) or 401 (the certificate was refused); 0 on no answer.
int asAliceWith(uint16_t port, const testing::ClientCertificate& certificate, std::string* body) {
  testing::TlsClient client(port, certificate);
  auto reply = client.get(kMetricPath, "X-Remote-User: alice\r\nX-Remote-Group: team-a\r\n");
  if (!reply) return 0;
  if (body != nullptr) *body = reply->body;
  return reply->status;
}

void setRequestHeaderCa(const std::string& pem) {
  auto patched = adminClient()->patch(ResourceRef::collection("", "v1", "configmaps", "kube-system")
                                          .named("extension-apiserver-authentication"),
                                      kube::PatchType::kMerge,
                                      {{"data", {{"requestheader-client-ca-file", pem}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().toString();
}

TEST_F(ClusterTest, AdapterFollowsTheFrontProxyCaOfTheAuthenticationConfigMap) {
  const std::string clusterFrontProxyCa = readFile(pki("front-proxy-ca.crt"));
  AdapterProcess adapter;
  ASSERT_NE(adapter.port(), 0) << adapter.log();

  // No CA flag, yet the listener asks for certificates of the ConfigMap's CAs.
  {
    testing::TlsClient probe(adapter.port());
    const auto names = probe.acceptableClientCaNames();
    EXPECT_NE(std::find(names.begin(), names.end(), commonNameOf(clusterFrontProxyCa)),
              names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), commonNameOf(readFile(pki("ca.crt")))),
              names.end());
  }

  // Through kube-apiserver's aggregator: the front-proxy certificate vouches for the forwarded
  // user, whom our SubjectAccessReview then names in the denial.
  auto available = registerCustomMetricsApiService("e2e-adapter-process", adapter.port());
  ASSERT_EQ(available.exitCode, 0) << available.err << adapter.log();
  const auto throughAggregator = [&] {
    return testing::runProcess(
        {env("GPUSCALE_KUBECTL", "kubectl"), "--kubeconfig=/dev/null", "--server",
         kube::loadKubeconfig(kubeconfig())->server, "--certificate-authority", pki("ca.crt"),
         "--token", serviceAccountToken("forwarded"), "get", "--raw", kMetricPath},
        seconds(60));
  };
  auto forwarded = throughAggregator();
  EXPECT_NE(forwarded.exitCode, 0);
  EXPECT_NE(forwarded.err.find("User \"system:serviceaccount:kube-e2e:forwarded\" cannot get"),
            std::string::npos)
      << forwarded.err;

  // A CA the cluster does not know yet: refused.
  const auto oldCa = testing::makeCa("e2e-front-proxy-old");
  const auto newCa = testing::makeCa("e2e-front-proxy-new");
  EXPECT_EQ(asAliceWith(adapter.port(), frontProxyClientOf(oldCa), nullptr), 401);

  // Added to the ConfigMap's bundle: accepted, as alice.
  setRequestHeaderCa(clusterFrontProxyCa + oldCa.certificatePem);
  EXPECT_TRUE(testing::waitUntil(
      [&] { return asAliceWith(adapter.port(), frontProxyClientOf(oldCa), nullptr) == 403; },
      seconds(30), milliseconds(200)))
      << adapter.log();
  std::string body;
  asAliceWith(adapter.port(), frontProxyClientOf(oldCa), &body);
  EXPECT_NE(body.find(R"(User \"alice\" cannot get resource \"pods/queue_time\")"),
            std::string::npos)
      << body;

  // Replaced by a new CA: the old one's certificates are refused, the new one's accepted, and new
  // connections are asked for the new CA. (kube-apiserver puts its own front-proxy CA back into
  // the bundle, so the aggregator keeps working.)
  setRequestHeaderCa(newCa.certificatePem);
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        return asAliceWith(adapter.port(), frontProxyClientOf(oldCa), nullptr) == 401 &&
               asAliceWith(adapter.port(), frontProxyClientOf(newCa), nullptr) == 403;
      },
      seconds(30), milliseconds(200)))
      << adapter.log();
  {
    testing::TlsClient probe(adapter.port());
    const auto names = probe.acceptableClientCaNames();
    EXPECT_NE(std::find(names.begin(), names.end(), "e2e-front-proxy-new"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "e2e-front-proxy-old"), names.end());
  }
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        auto again = throughAggregator();
        return again.err.find("User \"system:serviceaccount:kube-e2e:forwarded\"") !=
               std::string::npos;
      },
      seconds(90), milliseconds(1000)));

  // /metrics as the cluster admin (x509, client CA from the ConfigMap, system:masters).
  testing::TlsClient admin(adapter.port(), testing::ClientCertificate{readFile(pki("admin.crt")),
                                                                      readFile(pki("admin.key"))});
  auto metrics = admin.get("/metrics");
  ASSERT_TRUE(metrics.has_value());
  ASSERT_EQ(metrics->status, 200) << metrics->body;
  for (
      const std::string expected :
      {R"(gpuscale_serving_tls_reloads_total{result="success"})",
       R"(gpuscale_serving_tls_last_reload_successful 1)",
       R"(gpuscale_kube_client_requests_total{code="2xx",resource="subjectaccessreviews",verb="create"})",
       R"(gpuscale_kube_client_requests_total{code="2xx",resource="configmaps",verb="list"})",
       R"(gpuscale_kube_client_watch_starts_total{resource="configmaps"})",
       R"(gpuscale_kube_informer_last_sync_timestamp_seconds{resource="configmaps"})",
       "gpuscale_kube_client_rate_limiter_wait_seconds_count"}) {
    EXPECT_NE(metrics->body.find(expected), std::string::npos) << expected;
  }

  setRequestHeaderCa(clusterFrontProxyCa);
  kubectl({"delete", "apiservice", "v1beta1.custom.metrics.k8s.io"});
}

}  // namespace
}  // namespace gpuscale::e2e
