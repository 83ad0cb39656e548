// The identity an external-metrics fallback receives: ExternalMetricsRemote against a real HTTPS
// metrics API server (gpuscale's HttpsServer + ApiHandler) whose authenticator is the real
// front-proxy (requestheader) one, configured as kube-apiserver configures extension servers: the
// front-proxy CA and the allowed CN. The remote's authorizer and provider record what arrives.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>

#include "fakes/test_pki.h"
#include "gpuscale/adapter/external_metrics_remote.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/auth/delegating_authenticator.h"
#include "support/temp_dir.h"

namespace gpuscale::adapter {
namespace external_fallback_identity_test {

using apiserver::UserInfo;

class RecordingAuthorizer final : public apiserver::Authorizer {
 public:
  core::Result<apiserver::AuthorizationDecision> authorize(
      const UserInfo& user, const apiserver::RequestInfo& info) override {
    std::lock_guard lock(mutex);
    users.push_back(user);
    infos.push_back(info);
    return apiserver::AuthorizationDecision{true, ""};
  }
  std::mutex mutex;
  std::vector<UserInfo> users;
  std::vector<apiserver::RequestInfo> infos;
};

class KafkaLagProvider final : public apiserver::ExternalMetricsProvider {
 public:
  std::vector<apiserver::ExternalMetricInfo> listMetrics() const override {
    return {{"kafka_lag", true}};
  }
  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetric(
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& selector) override {
    std::lock_guard lock(mutex);
    lastNamespace = std::string(namespaceName);
    lastSelector = selector.toString();
    if (metric != "kafka_lag") return apiserver::metricNotFound({"", "namespaces"}, metric);
    apiserver::ExternalMetricValue value;
    value.metricName = "kafka_lag";
    value.metricLabels.emplace();
    value.metricLabels->emplace("topic", "t1");
    value.timestamp = apiserver::Timestamp(std::chrono::seconds(1714557600));
    value.value = *core::Quantity::parse("42");
    return std::vector<apiserver::ExternalMetricValue>{value};
  }
  std::mutex mutex;
  std::string lastNamespace;
  std::string lastSelector;
};

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class ExternalFallbackIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auth::AuthenticationConfig config;
    config.requestHeader.ca = *auth::CaBundle::fromPem(frontProxyCa_.certificatePem);
    config.requestHeader.allowedNames = {"front-proxy-client"};
    apiserver::ApiHandlerConfig handlerConfig;
    handlerConfig.externalMetrics = provider_;
    handlerConfig.authorizer = authorizer_;
    handlerConfig.authenticator = std::make_shared<auth::DelegatingAuthenticator>(
        std::make_shared<auth::AuthenticationConfigSource>(config), nullptr);
    handler_ = std::make_unique<apiserver::ApiHandler>(std::move(handlerConfig));

    auto serving =
        apiserver::generateSelfSignedCertificate("localhost", {"localhost"}, {"127.0.0.1"});
    ASSERT_TRUE(serving.ok()) << serving.status().message();
    writeFile(dir_.file("serving-ca.crt"), serving->caPem);
    apiserver::TlsConfig tls;
    tls.certificateChainPem = serving->certificateChainPem;
    tls.privateKeyPem = serving->privateKeyPem;
    tls.clientCaPems = {frontProxyCa_.certificatePem};
    apiserver::ServerOptions options;
    options.bindAddress = "127.0.0.1";
    options.securePort = 0;
    server_ = std::make_unique<apiserver::HttpsServer>(
        options, tls, [this](const apiserver::HttpRequest& r) { return handler_->handle(r); });
    ASSERT_TRUE(server_->start().ok());

    gpuscale::testing::CertificateSpec proxy;
    proxy.commonName = "front-proxy-client";
    auto proxyCert = gpuscale::testing::makeCertificate(proxy, &frontProxyCa_);
    writeFile(dir_.file("front-proxy-client.crt"), proxyCert.certificatePem);
    writeFile(dir_.file("front-proxy-client.key"), proxyCert.privateKeyPem);
  }
  void TearDown() override {
    if (server_) server_->shutdown(std::chrono::seconds(2));
  }

  ExternalFallbackOptions options(bool frontProxyCertificate) const {
    ExternalFallbackOptions out;
    out.url = "https://127.0.0.1:" + std::to_string(server_->securePort());
    out.caFile = dir_.file("serving-ca.crt");
    if (frontProxyCertificate) {
      out.clientCertFile = dir_.file("front-proxy-client.crt");
      out.clientKeyFile = dir_.file("front-proxy-client.key");
    }
    return out;
  }

  gpuscale::testing::TempDir dir_;
  gpuscale::testing::TestCertificate frontProxyCa_ = gpuscale::testing::makeCa("front-proxy-ca");
  std::shared_ptr<RecordingAuthorizer> authorizer_ = std::make_shared<RecordingAuthorizer>();
  std::shared_ptr<KafkaLagProvider> provider_ = std::make_shared<KafkaLagProvider>();
  std::unique_ptr<apiserver::ApiHandler> handler_;
  std::unique_ptr<apiserver::HttpsServer> server_;
};

const UserInfo kHpa{"system:serviceaccount:kube-system:horizontal-pod-autoscaler",
                    "",
                    {"system:serviceaccounts", "system:serviceaccounts:kube-system"},
                    {{"authentication.kubernetes.io/pod-name", {"kcm-0"}}, {"scopes", {"a", "b"}}}};

TEST_F(ExternalFallbackIdentityTest, TheRemoteSeesTheCallerAsTheAggregatorWouldSendIt) {
  auto remote = ExternalMetricsRemote::create(options(true));
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  auto values =
      (*remote)->getExternalMetric(kHpa, "topic in (t1,t2),partition!=3", "kafka", "kafka_lag");
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), 1u);
  EXPECT_EQ((*values)[0].value.toString(), "42");
  EXPECT_EQ((*values)[0].metricLabels->at("topic"), "t1");

  std::lock_guard lock(authorizer_->mutex);
  ASSERT_EQ(authorizer_->users.size(), 1u);
  const UserInfo& seen = authorizer_->users[0];
  EXPECT_EQ(seen.name, kHpa.name);
  // Each group arrived as its own header (the front-proxy authenticator adds
  // system:authenticated).
  EXPECT_EQ(seen.groups, (std::vector<std::string>{"system:serviceaccounts",
                                                   "system:serviceaccounts:kube-system",
                                                   "system:authenticated"}));
  EXPECT_EQ(seen.extra, kHpa.extra);
  const apiserver::RequestInfo& info = authorizer_->infos[0];
  EXPECT_EQ(info.verb, "list");
  EXPECT_EQ(info.apiGroup, "external.metrics.k8s.io");
  EXPECT_EQ(info.namespaceName, "kafka");
  EXPECT_EQ(info.resource, "kafka_lag");
  std::lock_guard providerLock(provider_->mutex);
  EXPECT_EQ(provider_->lastNamespace, "kafka");
  EXPECT_EQ(provider_->lastSelector,
            core::LabelSelector::parse("topic in (t1,t2),partition!=3")->toString());
}

TEST_F(ExternalFallbackIdentityTest, WithoutAFrontProxyCertificateTheHeadersCountForNothing) {
  auto remote = ExternalMetricsRemote::create(options(false));
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  auto values = (*remote)->getExternalMetric(kHpa, "", "kafka", "kafka_lag");
  ASSERT_TRUE(values.ok()) << values.status().message();
  std::lock_guard lock(authorizer_->mutex);
  ASSERT_EQ(authorizer_->users.size(), 1u);
  EXPECT_EQ(authorizer_->users[0].name, "system:anonymous");
}

TEST_F(ExternalFallbackIdentityTest, DiscoveryAndRemoteErrors) {
  auto remote = ExternalMetricsRemote::create(options(true));
  ASSERT_TRUE(remote.ok());
  auto metrics = (*remote)->listMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_EQ(*metrics, (std::vector<apiserver::ExternalMetricInfo>{{"kafka_lag", true}}));
  {
    std::lock_guard lock(authorizer_->mutex);
    ASSERT_EQ(authorizer_->users.size(), 1u);
    EXPECT_EQ(authorizer_->users[0].name, "gpuscale-adapter");
    EXPECT_EQ(authorizer_->users[0].groups, std::vector<std::string>{"system:authenticated"});
    EXPECT_FALSE(authorizer_->infos[0].isResourceRequest);  // a discovery path
  }
  auto missing = (*remote)->getExternalMetric(kHpa, "", "kafka", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().httpCode(), 404);
  EXPECT_EQ(missing.status().reason(), "NotFound");
  EXPECT_EQ(missing.status().message(), "the server could not find the metric nope for namespaces");
  // A labelSelector the remote cannot parse: its 400 comes back.
  auto bad = (*remote)->getExternalMetric(kHpa, "topic in (t1", "kafka", "kafka_lag");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().httpCode(), 400);
  EXPECT_EQ(bad.status().reason(), "BadRequest");
}

TEST_F(ExternalFallbackIdentityTest, AServerCertificateFromAnotherCaIsRefused) {
  ExternalFallbackOptions wrongCa = options(true);
  writeFile(dir_.file("other-ca.crt"), gpuscale::testing::makeCa("other").certificatePem);
  wrongCa.caFile = dir_.file("other-ca.crt");
  auto remote = ExternalMetricsRemote::create(wrongCa);
  ASSERT_TRUE(remote.ok());
  auto values = (*remote)->getExternalMetric(kHpa, "", "kafka", "kafka_lag");
  ASSERT_FALSE(values.ok());
  EXPECT_EQ(values.status().httpCode(), 503);
  EXPECT_NE(values.status().message().find("TLS handshake"), std::string::npos)
      << values.status().message();
}

}  // namespace external_fallback_identity_test
}  // namespace gpuscale::adapter
