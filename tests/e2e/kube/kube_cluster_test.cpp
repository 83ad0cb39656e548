// End-to-end tests of the Kubernetes client and the aggregated API's security against the REAL
// control plane of tests/cluster (started by run_e2e.sh, which passes its directory in
// GPUSCALE_TEST_CLUSTER_DIR): list/watch/patch/create on real objects, informer resume, discovery
// of a new CRD, TokenReview and SubjectAccessReview with RBAC, the authentication ConfigMap, and
// real TLS connections to an HTTPS server running the delegated authenticator/authorizer, including
// the path through kube-apiserver's aggregation layer.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "fakes/fake_http_server.h"
#include "fakes/fake_metrics_provider.h"
#include "fakes/test_pki.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/auth/delegation_options.h"
#include "gpuscale/auth/token_reviewer.h"
#include "gpuscale/kube/discovery.h"
#include "gpuscale/kube/informer.h"
#include "support/process.h"
#include "support/tls_client.h"
#include "support/wait_until.h"

namespace gpuscale {
namespace {

using kube::Object;
using kube::ResourceRef;
using std::chrono::seconds;

constexpr const char* kNs = "kube-e2e";

std::string env(const char* name, const char* fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}
std::string clusterDir() { return env("GPUSCALE_TEST_CLUSTER_DIR"); }
std::string kubeconfig() { return clusterDir() + "/kubeconfig"; }
std::string pki(const std::string& file) { return clusterDir() + "/pki/" + file; }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

testing::ProcessResult kubectl(std::vector<std::string> args, const std::string& input = "") {
  std::vector<std::string> argv = {env("GPUSCALE_KUBECTL", "kubectl"), "--kubeconfig",
                                   kubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::runProcess(argv, std::chrono::seconds(60), input);
}

void apply(const std::string& yaml) {
  auto result = kubectl({"apply", "-f", "-"}, yaml);
  ASSERT_EQ(result.exitCode, 0) << result.err;
}

std::shared_ptr<kube::RestKubeClient> adminClient() {
  auto config = kube::loadKubeconfig(kubeconfig());
  EXPECT_TRUE(config.ok()) << config.status().toString();
  config->qps = 0;
  auto client = kube::RestKubeClient::create(*config);
  EXPECT_TRUE(client.ok()) << client.status().toString();
  return *client;
}

std::string serviceAccountToken(const std::string& account) {
  kubectl({"-n", kNs, "create", "serviceaccount", account});  // AlreadyExists is fine
  auto token = kubectl({"-n", kNs, "create", "token", account});
  EXPECT_EQ(token.exitCode, 0) << token.err;
  std::string text = token.out;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

const ResourceRef kConfigMaps = ResourceRef::collection("", "v1", "configmaps", kNs);

Object configMap(const std::string& name) {
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

TEST_F(ClusterTest, CrudPaginationPatchAndTypedErrors) {
  auto client = adminClient();
  for (int i = 0; i < 5; ++i) {
    auto created = client->create(kConfigMaps, configMap("cm-" + std::to_string(i)));
    ASSERT_TRUE(created.ok()) << created.status().toString();
  }
  kube::ListOptions options;
  options.limit = 2;  // three pages
  options.labelSelector = "app=e2e";
  auto list = client->list(kConfigMaps, options);
  ASSERT_TRUE(list.ok()) << list.status().toString();
  EXPECT_EQ(list->items.size(), 5u);
  EXPECT_FALSE(list->resourceVersion.empty());

  auto missing = client->get(kConfigMaps.named("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(kube::isNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(), "configmaps \"nope\" not found");

  auto duplicate = client->create(kConfigMaps, configMap("cm-0"));
  ASSERT_FALSE(duplicate.ok());
  EXPECT_TRUE(kube::isConflict(duplicate.status()));
  EXPECT_EQ(duplicate.status().reason(), "AlreadyExists");

  auto current = client->get(kConfigMaps.named("cm-0"));
  ASSERT_TRUE(current.ok());
  Object stale = *current;
  ASSERT_TRUE(
      client
          ->patch(kConfigMaps.named("cm-0"), kube::PatchType::kMerge, {{"data", {{"k", "merged"}}}})
          .ok());
  stale["data"]["k"] = "lost update";
  auto conflict = client->update(kConfigMaps.named("cm-0"), stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().reason(), "Conflict");

  auto patched = client->patch(
      kConfigMaps.named("cm-0"), kube::PatchType::kJson,
      Object::parse(R"([{"op":"add","path":"/metadata/labels/tier","value":"gold"}])"));
  ASSERT_TRUE(patched.ok()) << patched.status().toString();
  EXPECT_EQ((*patched)["data"]["k"], "merged");
  EXPECT_EQ((*patched)["metadata"]["labels"]["tier"], "gold");

  auto invalid = client->patch(kConfigMaps.named("cm-0"), kube::PatchType::kJson,
                               Object::parse(R"([{"op":"test","path":"/data/k","value":"x"}])"));
  EXPECT_FALSE(invalid.ok());
}

TEST_F(ClusterTest, WatchStreamsRealEventsAndOldVersionsAreGone) {
  auto client = adminClient();
  ASSERT_TRUE(client->create(kConfigMaps, configMap("watched")).ok() ||
              client->get(kConfigMaps.named("watched")).ok());
  auto list = client->list(kConfigMaps, {});
  ASSERT_TRUE(list.ok());
  std::atomic<bool> sawModified{false};
  std::stop_source stop;
  std::thread watcher([&] {
    kube::WatchOptions options;
    options.resourceVersion = list->resourceVersion;
    options.fieldSelector = "metadata.name=watched";
    client->watch(
        kConfigMaps, options,
        [&](const kube::WatchEvent& e) {
          if (e.type == kube::WatchEvent::Type::kModified && e.object["data"]["k"] == "changed") {
            sawModified = true;
            return false;
          }
          return true;
        },
        stop.get_token());
  });
  ASSERT_TRUE(client
                  ->patch(kConfigMaps.named("watched"), kube::PatchType::kMerge,
                          {{"data", {{"k", "changed"}}}})
                  .ok());
  EXPECT_TRUE(testing::waitUntil([&] { return sawModified.load(); }, seconds(30)));
  stop.request_stop();
  watcher.join();

  kube::WatchOptions ancient;
  ancient.resourceVersion = "1";
  const auto status =
      client->watch(kConfigMaps, ancient, [](const kube::WatchEvent&) { return true; }, {});
  EXPECT_TRUE(kube::isGone(status)) << status.toString();
}

TEST_F(ClusterTest, InformerFollowsAndResumesWithoutRelisting) {
  auto client = adminClient();
  kube::InformerOptions options;
  options.resource = kConfigMaps;
  options.labelSelector = "app=informer";
  options.watchTimeoutSeconds = 2;  // the server ends each stream quickly: the informer must resume
  kube::Informer informer(client, options);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(seconds(30)));
  Object labelled = configMap("informed");
  labelled["metadata"]["labels"]["app"] = "informer";
  ASSERT_TRUE(client->create(kConfigMaps, labelled).ok());
  const auto selector = *core::LabelSelector::parse("app=informer");
  ASSERT_TRUE(
      testing::waitUntil([&] { return informer.store().list(selector).size() == 1; }, seconds(30)));
  std::this_thread::sleep_for(seconds(3));  // at least one stream ended and was resumed
  ASSERT_TRUE(client->remove(kConfigMaps.named("informed")).ok());
  ASSERT_TRUE(
      testing::waitUntil([&] { return informer.store().list(selector).empty(); }, seconds(30)));
  EXPECT_EQ(informer.stats().lists, 1u);
  EXPECT_GE(informer.stats().watches, 2u);
}

TEST_F(ClusterTest, DiscoveryFindsBuiltinsAndNewCrds) {
  auto client = adminClient();
  kube::DiscoveryResourceMapper mapper(client);
  ASSERT_TRUE(mapper.refresh().ok());
  EXPECT_TRUE(mapper.resourceFor({"", "pod"}).ok());
  auto deployments = mapper.resourceFor({"apps", "Deployment"});
  ASSERT_TRUE(deployments.ok());
  EXPECT_EQ(deployments->version, "v1");
  EXPECT_FALSE(mapper.resourceFor({"", "widget"}).ok());
  apply(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.gpuscale.io}
spec:
  group: e2e.gpuscale.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
)");
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        return mapper.refresh().ok() && mapper.resourceFor({"", "widget"}).ok();
      },
      seconds(60), std::chrono::milliseconds(500)));
  EXPECT_EQ(mapper.resourceFor({"", "Widget"})->groupResource.group, "e2e.gpuscale.io");
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
metadata: {name: sar-subject-metrics, namespace: kube-e2e}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: metrics-reader}
subjects: [{kind: ServiceAccount, name: sar-subject, namespace: kube-e2e}]
)");
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
    apiserver::TlsConfig tlsConfig{tls->certificateChainPem, tls->privateKeyPem,
                                   auth::clientCaPemsForTls(*auth.config->current()),
                                   apiserver::TlsMinVersion::kTls12};
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
metadata: {name: hpa-like-metrics, namespace: kube-e2e}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: metrics-reader}
subjects: [{kind: ServiceAccount, name: hpa-like, namespace: kube-e2e}]
)");
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
  testing::FakeHttpServer hung(
      [](const testing::FakeRequest&, testing::FakeHttpServer::Exchange& e) {
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
  apply(std::string(R"(apiVersion: v1
kind: Service
metadata: {name: e2e-adapter, namespace: kube-e2e}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.custom.metrics.k8s.io}
spec:
  group: custom.metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: e2e-adapter, namespace: kube-e2e, port: )") +
        std::to_string(secured.port()) + "}\n");
  auto available = kubectl({"wait", "--for=condition=Available",
                            "apiservice/v1beta1.custom.metrics.k8s.io", "--timeout=120s"});
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
}  // namespace gpuscale
