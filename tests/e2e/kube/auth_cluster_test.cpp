// End-to-end tests of the aggregated API's security against the REAL control plane of
// tests/cluster (started by run_e2e.sh): TokenReview and SubjectAccessReview with RBAC, the
// authentication ConfigMap, real TLS connections to an HTTPS server running the delegated
// authenticator/authorizer for every credential case, kubectl with service-account tokens, review
// endpoints that hang, and the path through kube-apiserver's aggregation layer.
#include <gtest/gtest.h>

#include "e2e/kube/cluster_fixture.h"

namespace gpuscale::e2e {
namespace {

// RBAC that lets ServiceAccount `account` of kube-e2e get the pods/queue_time custom metric there.
void grantQueueTimeRead(const std::string& account) {
  apply(R"(apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: metrics-reader, namespace: kube-e2e}
rules:
- apiGroups: [custom.metrics.k8s.io]
  resources: [pods/queue_time]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: )" +
        account + R"(-metrics, namespace: kube-e2e}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: metrics-reader}
subjects: [{kind: ServiceAccount, name: )" +
        account + ", namespace: kube-e2e}]\n");
}

TEST_F(ClusterTest, RealTokenReview) {
  auth::TokenReviewer reviewer(adminClient(), seconds(10));
  auto user = reviewer.review(serviceAccountToken("reviewed"));
  ASSERT_TRUE(user.ok()) << user.status().toString();
  ASSERT_TRUE(user->has_value());
  EXPECT_EQ((*user)->name, "system:serviceaccount:kube-e2e:reviewed");
  EXPECT_NE(std::find((*user)->groups.begin(), (*user)->groups.end(), "system:serviceaccounts"),
            (*user)->groups.end());
  auto rejected = reviewer.review("not-a-token");
  ASSERT_TRUE(rejected.ok()) << rejected.status().toString();
  EXPECT_FALSE(rejected->has_value());
}

TEST_F(ClusterTest, RealSubjectAccessReviewFollowsRbac) {
  auth::AuthorizerOptions options;
  options.allowedTtl = options.deniedTtl = std::chrono::milliseconds(0);
  auth::DelegatingAuthorizer authorizer(adminClient(), options);
  const apiserver::UserInfo user{"system:serviceaccount:kube-e2e:sar-subject",
                                 "",
                                 {"system:serviceaccounts", "system:authenticated"},
                                 {}};
  const auto info = apiserver::parseRequestInfo(
      "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/kube-e2e/pods/*/queue_time",
      apiserver::QueryParams());
  auto denied = authorizer.authorize(user, info);
  ASSERT_TRUE(denied.ok()) << denied.status().toString();
  EXPECT_FALSE(denied->allowed);
  grantQueueTimeRead("sar-subject");
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        auto decision = authorizer.authorize(user, info);
        return decision.ok() && decision->allowed;
      },
      seconds(30), std::chrono::milliseconds(200)));
  // Exact attributes: a different subresource (metric) is still denied.
  const auto other = apiserver::parseRequestInfo(
      "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/kube-e2e/pods/*/other_metric",
      apiserver::QueryParams());
  EXPECT_FALSE(authorizer.authorize(user, other)->allowed);
}

TEST_F(ClusterTest, AuthenticationConfigMapIsReadFromTheCluster) {
  auth::AuthenticationConfigSource source({});
  ASSERT_TRUE(source.startWatching(adminClient(), {}).ok());
  const auto config = source.current();
  ASSERT_TRUE(config->requestHeader.ca);
  EXPECT_EQ(config->requestHeader.ca->pem(), readFile(pki("front-proxy-ca.crt")));
  EXPECT_EQ(config->requestHeader.allowedNames, std::vector<std::string>{"front-proxy-client"});
  EXPECT_EQ(config->requestHeader.usernameHeaders, std::vector<std::string>{"X-Remote-User"});
  ASSERT_TRUE(config->clientCa);
  EXPECT_EQ(config->clientCa->pem(), readFile(pki("ca.crt")));
}

// --- the HTTPS server with delegated authentication and authorization -------------------------

struct SecuredServer {
  std::shared_ptr<testing::FakeCustomMetricsProvider> provider =
      std::make_shared<testing::FakeCustomMetricsProvider>();
  auth::DelegatedAuth auth;
  std::unique_ptr<apiserver::ApiHandler> handler;
  std::unique_ptr<apiserver::HttpsServer> server;

  explicit SecuredServer(auth::DelegationOptions options) {
    auto built = auth::buildDelegatedAuth(options);
    EXPECT_TRUE(built.ok()) << built.status().toString();
    auth = *built;
    provider->addMetric({{"", "pods"}, true, "queue_time"});
    apiserver::ApiHandlerConfig config;
    config.customMetrics = provider;
    config.authenticator = auth.authenticator;
    config.authorizer = auth.authorizer;
    handler = std::make_unique<apiserver::ApiHandler>(config);
    apiserver::ServerOptions serving;
    serving.bindAddress = "127.0.0.1";
    serving.securePort = 0;
    auto tls = apiserver::generateSelfSignedCertificate("localhost", {}, {"127.0.0.1"});
    EXPECT_TRUE(tls.ok());
    apiserver::TlsConfig tlsConfig;
    tlsConfig.certificateChainPem = tls->certificateChainPem;
    tlsConfig.privateKeyPem = tls->privateKeyPem;
    tlsConfig.clientCaPems = auth::clientCaPemsForTls(*auth.config->current());
    server = std::make_unique<apiserver::HttpsServer>(
        serving, tlsConfig, [this](const apiserver::HttpRequest& r) { return handler->handle(r); });
    const auto started = server->start();
    EXPECT_TRUE(started.ok()) << started.toString();
  }
  ~SecuredServer() { server->shutdown(seconds(5)); }
  uint16_t port() const { return server->securePort(); }
};

auth::DelegationOptions clusterOptions() {
  auth::DelegationOptions options;
  options.authenticationKubeconfig = kubeconfig();
  options.authorizationKubeconfig = kubeconfig();
  options.authorization.allowedTtl = options.authorization.deniedTtl = std::chrono::milliseconds(0);
  return options;
}

testing::ClientCertificate fromFiles(const std::string& name) {
  return {readFile(pki(name + ".crt")), readFile(pki(name + ".key"))};
}

testing::ClientCertificate signedByFrontProxyCa(const std::string& cn, seconds notAfter) {
  const auto ca = testing::loadCertificate(readFile(pki("front-proxy-ca.crt")),
                                           readFile(pki("front-proxy-ca.key")));
  testing::CertificateSpec spec;
  spec.commonName = cn;
  spec.notAfter = notAfter;
  const auto cert = testing::makeCertificate(spec, &ca);
  return {cert.certificatePem, cert.privateKeyPem};
}

constexpr const char* kDiscovery = "/apis/custom.metrics.k8s.io/v1beta1";
const std::string kForged = "X-Remote-User: admin\r\nX-Remote-Group: system:masters\r\n";
const std::string kUnauthorized =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
    R"("message":"Unauthorized","reason":"Unauthorized","code":401})";

constexpr const char* kMetric =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/kube-e2e/pods/*/queue_time";

struct TlsCase {
  const char* what;
  std::function<std::optional<testing::ClientCertificate>()> certificate;
  std::string headers;
  std::string path;
  int status;
  std::string bodyContains;
};

std::string forbiddenFor(const std::string& user) {
  return R"(pods.custom.metrics.k8s.io \"*\" is forbidden: User \")" + user +
         R"(\" cannot get resource \"pods/queue_time\" in API group \"custom.metrics.k8s.io\" )"
         R"(in the namespace \"kube-e2e\")";
}

// Every authenticated user may read discovery paths (system:discovery), so the denials are checked
// on a metric, which needs RBAC the test users do not have.
TEST_F(ClusterTest, RealTlsConnectionsForEveryCredentialCase) {
  SecuredServer secured(clusterOptions());
  const auto none = [] { return std::optional<testing::ClientCertificate>(); };
  const auto proxy = [] { return std::optional(fromFiles("front-proxy-client")); };
  const std::vector<TlsCase> cases = {
      {"front proxy with allowed CN, user in system:masters", proxy,
       "X-Remote-User: alice\r\nX-Remote-Group: system:masters\r\n", kDiscovery, 200,
       "APIResourceList"},
      {"front proxy, ordinary user: authenticated, discovery allowed by RBAC", proxy,
       "X-Remote-User: alice\r\n", kDiscovery, 200, "APIResourceList"},
      {"front proxy, ordinary user: the SubjectAccessReview denies the metric", proxy,
       "X-Remote-User: alice\r\n", kMetric, 403, forbiddenFor("alice")},
      {"forged X-Remote-* without a certificate: anonymous", none, kForged, kMetric, 403,
       forbiddenFor("system:anonymous")},
      {"forged X-Remote-* without a certificate: anonymous on discovery too", none, kForged,
       kDiscovery, 403,
       R"(forbidden: User \"system:anonymous\" cannot get path \"/apis/custom.metrics.k8s.io/v1beta1\")"},
      {"forged X-Remote-* with a cluster client certificate: that certificate's user",
       [] { return std::optional(fromFiles("kube-scheduler")); }, kForged, kMetric, 403,
       forbiddenFor("system:kube-scheduler")},
      {"CN not in the allowed names",
       [] { return std::optional(signedByFrontProxyCa("intruder", seconds(3600))); }, kForged,
       kDiscovery, 401, kUnauthorized},
      {"expired front-proxy certificate",
       [] { return std::optional(signedByFrontProxyCa("front-proxy-client", seconds(-60))); },
       kForged, kDiscovery, 401, kUnauthorized},
      {"front-proxy CN from the wrong CA",
       [] {
         const auto rogue = testing::makeCa("rogue-ca");
         testing::CertificateSpec spec;
         spec.commonName = "front-proxy-client";
         const auto cert = testing::makeCertificate(spec, &rogue);
         return std::optional(testing::ClientCertificate{cert.certificatePem, cert.privateKeyPem});
       },
       kForged, kDiscovery, 401, kUnauthorized},
      {"admin client certificate (system:masters): past authorization to the provider",
       [] { return std::optional(fromFiles("admin")); }, "", kMetric, 404,
       "the server could not find the metric queue_time for pods"},
      {"healthz is always allowed, even anonymously", none, "", "/healthz", 200, "ok"},
  };
  for (const auto& c : cases) {
    testing::TlsClient client(secured.port(), c.certificate());
    auto reply = client.get(c.path, c.headers);
    ASSERT_TRUE(reply.has_value()) << c.what;
    EXPECT_EQ(reply->status, c.status) << c.what << ": " << reply->body;
    EXPECT_NE(reply->body.find(c.bodyContains), std::string::npos) << c.what << ": " << reply->body;
  }
}

TEST_F(ClusterTest, KubectlWithServiceAccountTokensAndRbac) {
  SecuredServer secured(clusterOptions());
  const std::string server = "https://127.0.0.1:" + std::to_string(secured.port());
  const std::string path =
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/kube-e2e/pods/*/queue_time";
  const auto raw = [&](const std::string& token) {
    return testing::runProcess(
        {env("GPUSCALE_KUBECTL", "kubectl"), "--kubeconfig=/dev/null", "--server", server,
         "--insecure-skip-tls-verify", "--token", token, "get", "--raw", path},
        seconds(60));
  };
  const std::string token = serviceAccountToken("hpa-like");
  auto forbidden = raw(token);
  EXPECT_NE(forbidden.exitCode, 0);
  EXPECT_NE(forbidden.err.find("forbidden"), std::string::npos) << forbidden.err;
  auto unauthorized = raw("garbage-token");
  EXPECT_NE(unauthorized.exitCode, 0);
  EXPECT_NE(unauthorized.err.find("Unauthorized"), std::string::npos) << unauthorized.err;

  grantQueueTimeRead("hpa-like");
  bool allowed = testing::waitUntil(
      [&] {
        auto result = raw(token);
        // Authorized now; the fake provider has no pods, so the answer is the provider's 404.
        return result.exitCode == 0 || result.err.find("NotFound") != std::string::npos ||
               result.err.find("not found") != std::string::npos;
      },
      seconds(30), std::chrono::milliseconds(500));
  EXPECT_TRUE(allowed);
}

TEST_F(ClusterTest, ReviewEndpointsDownFailClosed) {
  // A kubeconfig whose server accepts connections and never answers (a hung kube-apiserver).
  test::HttpTestServer hung([](const test::HttpTestRequest&, test::HttpTestServer::Exchange& e) {
    e.waitFor(seconds(60));
  });
  const std::string deadKubeconfig = clusterDir() + "/dead-kubeconfig";
  std::ofstream(deadKubeconfig) << "clusters: [{name: c, cluster: {server: '" << hung.url()
                                << "'}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: "
                                   "x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
  auth::DelegationOptions options;
  options.authenticationKubeconfig = deadKubeconfig;
  options.authorizationKubeconfig = deadKubeconfig;
  options.skipLookup = true;
  options.authentication.clientCaFile = pki("ca.crt");
  options.authentication.requestHeaderClientCaFile = pki("front-proxy-ca.crt");
  options.authentication.requestHeaderAllowedNames = {"front-proxy-client"};
  options.reviewTimeout = seconds(2);
  SecuredServer secured(options);

  testing::TlsClient tokenClient(secured.port());
  auto reply = tokenClient.get(kDiscovery, "Authorization: Bearer some-token\r\n");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 401);
  EXPECT_EQ(reply->body, kUnauthorized + "\n");  // Kubernetes ends JSON bodies with a newline

  testing::TlsClient proxied(secured.port(), fromFiles("front-proxy-client"));
  reply = proxied.get(kDiscovery, "X-Remote-User: alice\r\n");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 500);
  EXPECT_NE(reply->body.find("SubjectAccessReview failed"), std::string::npos) << reply->body;

  // Masters need no review and still get through; the server stays responsive.
  testing::TlsClient master(secured.port(), fromFiles("front-proxy-client"));
  reply = master.get(kDiscovery, "X-Remote-User: agg\r\nX-Remote-Group: system:masters\r\n");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200);
  hung.stop();
}

TEST_F(ClusterTest, AggregatorReachesTheServerThroughTheFrontProxy) {
  SecuredServer secured(clusterOptions());
  auto available = registerCustomMetricsApiService("e2e-adapter", secured.port());
  EXPECT_EQ(available.exitCode, 0) << available.err;
  // As the admin (system:masters) through kube-apiserver: the aggregator's front-proxy certificate
  // and X-Remote-* headers are what authenticates the request here.
  auto discovery = kubectl({"get", "--raw", kDiscovery});
  EXPECT_EQ(discovery.exitCode, 0) << discovery.err;
  EXPECT_NE(discovery.out.find("pods/queue_time"), std::string::npos) << discovery.out;
  // A service account without RBAC is forbidden by our SubjectAccessReview, relayed by the proxy.
  // Only the token: the admin kubeconfig's client certificate would authenticate first.
  auto denied = testing::runProcess(
      {env("GPUSCALE_KUBECTL", "kubectl"), "--kubeconfig=/dev/null", "--server",
       kube::loadKubeconfig(kubeconfig())->server, "--certificate-authority", pki("ca.crt"),
       "--token", serviceAccountToken("no-rights"), "get", "--raw",
       "/apis/custom.metrics.k8s.io/v1beta1/namespaces/kube-e2e/pods/*/queue_time"},
      seconds(60));
  EXPECT_NE(denied.exitCode, 0);
  EXPECT_NE(denied.err.find("forbidden"), std::string::npos) << denied.err;
  kubectl({"delete", "apiservice", "v1beta1.custom.metrics.k8s.io"});
}

}  // namespace
}  // namespace gpuscale::e2e
