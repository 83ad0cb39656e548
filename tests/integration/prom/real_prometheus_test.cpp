// The Prometheus client against a real Prometheus (Debian's, or the matrix's other release; or
// VictoriaMetrics, or Thanos in front of Prometheus): scraped data through every API call, GET and
// POST, a path prefix, basic auth, TLS with server verification and client certificates, and a
// stopped server; and what each other backend answers differently. Skipped when prometheus is not
// installed.
#include <gtest/gtest.h>

#include <signal.h>

#include <cpprest/http_client.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/errors.h"
#include "gpuscale/prom/http_client.h"
#include "support/exporter_server.h"
#include "support/prometheus_server.h"
#include "support/thanos.h"
#include "support/victoriametrics.h"

namespace gpuscale::prom {
namespace real_prometheus_test {

using test::ExporterServer;
using test::PrometheusServer;
using test::PrometheusServerOptions;
using test::thanosUnderTest;
using test::victoriaMetricsUnderTest;

constexpr const char* kOwnServingFlags =
    "Prometheus' route prefix and web config; VictoriaMetrics and Thanos serve these through their "
    "own flags (-http.pathPrefix, -httpAuth.*, -tls*; --web.route-prefix, --http.config), which "
    "the "
    "backend matrix does not cover";

// bcrypt (cost 4) of "secret", for the basic-auth web config.
constexpr const char* kSecretHash = "$2b$04$YR7/VlHKwi6jLR7ymQJt1OH5SLX7YEO0QAX9e6uGv6.l4Vz1W.NEa";
constexpr const char* kTriton = R"(nv_inference_request_success{namespace="default"})";

Timestamp now() { return std::chrono::system_clock::now(); }

// `view` without the label `label`.
MetricLabelNames without(MetricLabelNames view, const std::string& label) {
  for (auto& [name, labels] : view) std::erase(labels, label);
  return view;
}

std::unique_ptr<HttpClient> clientFor(PrometheusOptions options) {
  auto client = HttpClient::create(options);
  EXPECT_TRUE(client.ok()) << client.status().toString();
  return client.ok() ? std::move(*client) : nullptr;
}

// Waits (bounded) until `promql` returns at least `want` samples; returns the last result.
Result<QueryResultPtr> waitForSamples(Client& client, const std::string& promql, size_t want) {
  Result<QueryResultPtr> result = Status::unavailable("not asked");
  for (int i = 0; i < 300; ++i) {
    result = client.query(promql, now());
    if (result.ok() && (*result)->vector.size() >= want) return result;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return result;
}

class RealPrometheusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!PrometheusServer::available()) return;
    exporter_ = new ExporterServer();
    exporter_->addTritonRequests("default", "triton-a", 10, 4000);
    exporter_->addTritonRequests("default", "triton-b", 20, 100);
    exporter_->addTritonRequests("other", "triton-c", 1, 1);
    PrometheusServerOptions options;
    options.scrapeTargets = {exporter_->target()};
    server_ = PrometheusServer::startForSuite(options, startError_);
  }
  static void TearDownTestSuite() {
    delete server_;
    delete exporter_;
    server_ = nullptr;
    exporter_ = nullptr;
  }
  void SetUp() override {
    if (!PrometheusServer::available()) GTEST_SKIP() << "prometheus is not installed";
    ASSERT_NE(server_, nullptr) << startError_;
  }
  PrometheusOptions options() const {
    PrometheusOptions o;
    o.url = server_->url();
    o.timeout = std::chrono::seconds(10);
    return o;
  }

  static inline ExporterServer* exporter_ = nullptr;
  static inline PrometheusServer* server_ = nullptr;
  static inline std::string startError_;
};

// The backend matrix names the release each run must be talking to ($GPUSCALE_PROMETHEUS_VERSION, a
// prefix such as "3."), so a run cannot silently test the wrong server.
TEST_F(RealPrometheusTest, IsTheReleaseUnderTest) {
  const char* expected = std::getenv("GPUSCALE_PROMETHEUS_VERSION");
  if (expected == nullptr) GTEST_SKIP() << "GPUSCALE_PROMETHEUS_VERSION is not set";
  web::http::client::http_client_config config;
  config.set_proxy(web::web_proxy(web::web_proxy::disabled));
  web::http::client::http_client http(web::uri(server_->url()), config);
  auto response = http.request(web::http::methods::GET, "/api/v1/status/buildinfo").get();
  ASSERT_EQ(response.status_code(), 200);
  const std::string version = response.extract_json().get().at("data").at("version").as_string();
  EXPECT_EQ(version.rfind(expected, 0), 0u) << "version " << version << ", expected " << expected;
}

TEST_F(RealPrometheusTest, QueriesAScrapedSeriesWithGetAndPost) {
  for (HttpVerb verb : {HttpVerb::kGet, HttpVerb::kPost}) {
    auto o = options();
    o.verb = verb;
    auto client = clientFor(o);
    auto result = waitForSamples(*client, kTriton, 2);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    ASSERT_EQ((*result)->vector.size(), 2u);
    std::map<std::string, double> byPod;
    for (const auto& sample : (*result)->vector)
      byPod[sample.metric.at("pod")] = sample.point.value;
    EXPECT_EQ(byPod["triton-a"], 10);
    EXPECT_EQ(byPod["triton-b"], 20);
  }
}

TEST_F(RealPrometheusTest, EveryResultTypeAndPrometheusErrors) {
  if (victoriaMetricsUnderTest()) {
    GTEST_SKIP() << "MetricsQL answers scalars and strings as vectors "
                    "(VictoriaMetricsAnswersScalarsAsVectors)";
  }
  auto client = clientFor(options());
  ASSERT_TRUE(waitForSamples(*client, kTriton, 2).ok());
  auto scalar = client->query("1 + 1", now());
  ASSERT_TRUE(scalar.ok()) << scalar.status().toString();
  EXPECT_EQ((*scalar)->type, ResultType::kScalar);
  EXPECT_EQ((*scalar)->scalar.value, 2);
  auto matrix = client->query(std::string(kTriton) + "[1m]", now());
  ASSERT_TRUE(matrix.ok());
  EXPECT_EQ((*matrix)->type, ResultType::kMatrix);
  EXPECT_EQ((*matrix)->matrix.size(), 2u);
  auto string = client->query("\"hello\"", now());
  ASSERT_TRUE(string.ok());
  EXPECT_EQ((*string)->string, "hello");
  auto inf = client->query("1/0", now());
  ASSERT_TRUE(inf.ok());
  EXPECT_TRUE(std::isinf((*inf)->scalar.value)) << "+Inf arrives as +Inf";
  auto nan = client->query("0/0", now());
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan((*nan)->scalar.value)) << "NaN arrives as NaN";
  auto bad = client->query("sum(", now());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(failureKindOf(bad.status()), FailureKind::kPrometheusError);
  EXPECT_NE(bad.status().message().find("bad_data"), std::string::npos) << bad.status().message();
  auto empty = client->query("nv_inference_request_success{pod=\"nope\"}", now());
  ASSERT_TRUE(empty.ok()) << "no data is an empty vector, not an error";
  EXPECT_TRUE((*empty)->vector.empty());
}

// MetricsQL differs from PromQL in result types: a scalar is a one-sample vector without labels, a
// string literal and NaN results are empty vectors, and errors carry errorType "400" (the client
// still reports them as Prometheus errors).
TEST_F(RealPrometheusTest, VictoriaMetricsAnswersScalarsAsVectors) {
  if (!victoriaMetricsUnderTest()) GTEST_SKIP() << "PromQL (EveryResultTypeAndPrometheusErrors)";
  auto client = clientFor(options());
  ASSERT_TRUE(waitForSamples(*client, kTriton, 2).ok());
  auto scalar = client->query("1 + 1", now());
  ASSERT_TRUE(scalar.ok()) << scalar.status().toString();
  ASSERT_EQ((*scalar)->type, ResultType::kVector);
  ASSERT_EQ((*scalar)->vector.size(), 1u);
  EXPECT_TRUE((*scalar)->vector[0].metric.empty());
  EXPECT_EQ((*scalar)->vector[0].point.value, 2);
  auto matrix = client->query(std::string(kTriton) + "[1m]", now());
  ASSERT_TRUE(matrix.ok());
  EXPECT_EQ((*matrix)->type, ResultType::kMatrix);
  auto inf = client->query("1/0", now());
  ASSERT_TRUE(inf.ok());
  ASSERT_EQ((*inf)->vector.size(), 1u);
  EXPECT_TRUE(std::isinf((*inf)->vector[0].point.value));
  for (const char* empty : {"0/0", "\"hello\""}) {
    auto result = client->query(empty, now());
    ASSERT_TRUE(result.ok()) << empty;
    EXPECT_EQ((*result)->type, ResultType::kVector) << empty;
    EXPECT_TRUE((*result)->vector.empty()) << empty;
  }
  auto bad = client->query("sum(", now());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(failureKindOf(bad.status()), FailureKind::kPrometheusError);
  EXPECT_NE(bad.status().message().find("400"), std::string::npos) << bad.status().message();
}

// VictoriaMetrics' `limit` on the label APIs truncates without a warning, and `/api/v1/series`
// fails outright above -search.maxSeries (30,000 by default; 2 here) while the label calls
// discovery makes still answer: the series relist is no fallback on a big VictoriaMetrics.
TEST_F(RealPrometheusTest, VictoriaMetricsTruncatesAtLimitAndCapsTheSeriesApi) {
  if (!victoriaMetricsUnderTest()) GTEST_SKIP() << "VictoriaMetrics' own limits";
  auto client = clientFor(options());
  ASSERT_TRUE(waitForSamples(*client, "nv_inference_queue_duration_us", 3).ok());
  web::http::client::http_client_config config;
  config.set_proxy(web::web_proxy(web::web_proxy::disabled));
  web::http::client::http_client http(web::uri(server_->url()), config);
  web::uri_builder path("/api/v1/label/pod/values");
  path.append_query("match[]", kTriton).append_query("limit", "1");
  auto response = http.request(web::http::methods::GET, path.to_string()).get();
  ASSERT_EQ(response.status_code(), 200);
  auto body = response.extract_json().get();
  EXPECT_EQ(body.at("data").as_array().size(), 1u) << "two pods match";
  EXPECT_FALSE(body.has_field("warnings")) << body.serialize();

  PrometheusServerOptions o;
  o.scrapeTargets = {exporter_->target()};
  o.extraArgs = {"-search.maxSeries=2"};
  auto capped = PrometheusServer::start(o);
  ASSERT_TRUE(capped.ok()) << capped.status().toString();
  PrometheusOptions po;
  po.url = (*capped)->url();
  po.timeout = std::chrono::seconds(10);
  auto cappedClient = clientFor(po);
  ASSERT_TRUE(waitForSamples(*cappedClient, "nv_inference_queue_duration_us", 3).ok());
  const std::string query = R"({__name__=~"nv_inference_.*",namespace!="",pod!=""})";
  TimeRange window{now() - std::chrono::minutes(10), std::nullopt};
  auto series = discoverLabelNamesFromSeries(*cappedClient, query, window);
  ASSERT_FALSE(series.ok());
  EXPECT_EQ(failureKindOf(series.status()), FailureKind::kPrometheusError);
  EXPECT_NE(series.status().message().find("-search.max"), std::string::npos)
      << series.status().message();
  DiscoveryReport report;
  auto labels = discoverLabelNames(*cappedClient, query, window, {}, &report);
  ASSERT_TRUE(labels.ok()) << labels.status().toString();
  EXPECT_FALSE(report.usedSeriesFallback);
  EXPECT_EQ(labels->size(), 10u);
}

TEST_F(RealPrometheusTest, SeriesAndLabelApisAndCheapDiscoveryAgree) {
  auto client = clientFor(options());
  ASSERT_TRUE(waitForSamples(*client, "nv_inference_queue_duration_us", 3).ok());
  TimeRange window{now() - std::chrono::minutes(10), std::nullopt};
  auto series = client->series({kTriton}, window);
  ASSERT_TRUE(series.ok()) << series.status().toString();
  EXPECT_EQ(series->size(), 2u);
  auto pods = client->labelValues("pod", {R"({__name__=~"nv_inference_.*"})"}, window);
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ(*pods, (std::vector<std::string>{"triton-a", "triton-b", "triton-c"}));
  auto names = client->labelNames({kTriton}, window);
  ASSERT_TRUE(names.ok());
  EXPECT_NE(std::find(names->begin(), names->end(), "namespace"), names->end());

  const std::string seriesQuery = R"({__name__=~"nv_inference_.*",namespace!="",pod!=""})";
  DiscoveryReport report;
  auto cheap = discoverLabelNames(*client, seriesQuery, window, {}, &report);
  ASSERT_TRUE(cheap.ok()) << cheap.status().toString();
  EXPECT_FALSE(report.usedSeriesFallback);
  auto full = discoverLabelNamesFromSeries(*client, seriesQuery, window);
  ASSERT_TRUE(full.ok());
  // Thanos' label APIs keep the replica label that deduplication removes from series
  // (ThanosAddsExternalLabelsAndItsLabelApisKeepTheReplicaLabel).
  EXPECT_EQ(thanosUnderTest() ? without(*cheap, test::kThanosReplicaLabel) : *cheap, *full);
  ASSERT_EQ(cheap->size(), 10u) << "the Triton families of sim/triton_exposition.h";
  std::vector<std::string> want = {"instance", "job", "model", "namespace", "pod", "version"};
  if (thanosUnderTest()) want.insert(want.begin(), test::kThanosClusterLabel);
  EXPECT_EQ(full->at("nv_inference_queue_duration_us"), want);
}

// Thanos adds the Prometheus' external labels that are not replica labels (`cluster`) to every
// series, query result and label-name list, and removes the replica label from series and query
// results by deduplication; its label APIs (0.42) do not deduplicate, so label names and label
// values still show the replica label. Exact discovery on Thanos therefore ignores the replica
// label, and rules must not name it (its values are those of one replica).
TEST_F(RealPrometheusTest, ThanosAddsExternalLabelsAndItsLabelApisKeepTheReplicaLabel) {
  if (!thanosUnderTest()) GTEST_SKIP() << "Thanos' external and replica labels";
  auto client = clientFor(options());
  auto result = waitForSamples(*client, kTriton, 2);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  for (const auto& sample : (*result)->vector) {
    EXPECT_EQ(sample.metric.count(test::kThanosClusterLabel), 1u);
    EXPECT_EQ(sample.metric.count(test::kThanosReplicaLabel), 0u);
  }
  TimeRange window{now() - std::chrono::minutes(10), std::nullopt};
  auto series = client->series({kTriton}, window);
  ASSERT_TRUE(series.ok()) << series.status().toString();
  ASSERT_FALSE(series->empty());
  for (const auto& one : *series) {
    EXPECT_EQ(one.at(test::kThanosClusterLabel), test::kThanosClusterValue);
    EXPECT_EQ(one.count(test::kThanosReplicaLabel), 0u);
  }
  auto names = client->labelNames({kTriton}, window);
  ASSERT_TRUE(names.ok()) << names.status().toString();
  for (const char* label : {test::kThanosClusterLabel, test::kThanosReplicaLabel}) {
    EXPECT_NE(std::find(names->begin(), names->end(), label), names->end()) << label;
  }
  auto replicas = client->labelValues(test::kThanosReplicaLabel, {kTriton}, window);
  ASSERT_TRUE(replicas.ok()) << replicas.status().toString();
  EXPECT_EQ(*replicas, (std::vector<std::string>{"r0"}));
}

// Thanos' `limit` truncates the label and series APIs with a warning.
TEST_F(RealPrometheusTest, ThanosTruncatesAtLimitWithAWarning) {
  if (!thanosUnderTest()) GTEST_SKIP() << "Thanos' limit";
  auto client = clientFor(options());
  ASSERT_TRUE(waitForSamples(*client, kTriton, 2).ok());
  web::http::client::http_client_config config;
  config.set_proxy(web::web_proxy(web::web_proxy::disabled));
  web::http::client::http_client http(web::uri(server_->url()), config);
  for (const char* path : {"/api/v1/label/pod/values", "/api/v1/series", "/api/v1/labels"}) {
    web::uri_builder uri(path);
    uri.append_query("match[]", kTriton).append_query("limit", "1");
    auto response = http.request(web::http::methods::GET, uri.to_string()).get();
    ASSERT_EQ(response.status_code(), 200) << path;
    auto body = response.extract_json().get();
    EXPECT_EQ(body.at("data").as_array().size(), 1u) << path;
    ASSERT_TRUE(body.has_array_field("warnings")) << path << ": " << body.serialize();
    EXPECT_EQ(body.at("warnings").as_array().at(0).as_string(), "results truncated due to limit");
  }
}

// Thanos answers with partial responses by default: when the Prometheus behind the sidecar is down,
// a query and a label call answer 200 without data and with a warning (no data that looks like
// "nothing matched"). `partial_response=false` in the URL makes them errors, which the adapter then
// reports as such (docs/operations.md says to set it).
TEST_F(RealPrometheusTest, ThanosPartialResponseHidesADownPrometheusUnlessTurnedOff) {
  if (!thanosUnderTest()) GTEST_SKIP() << "Thanos' partial response";
  PrometheusServerOptions o;
  o.scrapeTargets = {exporter_->target()};
  auto server = PrometheusServer::start(o);
  ASSERT_TRUE(server.ok()) << server.status().toString();
  PrometheusOptions partial;
  partial.url = (*server)->url();
  partial.timeout = std::chrono::seconds(10);
  PrometheusOptions strict = partial;
  strict.url += "/?partial_response=false";
  auto partialClient = clientFor(partial);
  auto strictClient = clientFor(strict);
  ASSERT_TRUE(waitForSamples(*partialClient, kTriton, 2).ok());
  ASSERT_TRUE(waitForSamples(*strictClient, kTriton, 2).ok());
  ::kill((*server)->pid(), SIGKILL);  // Prometheus only: the sidecar and the query stay up
  TimeRange window{now() - std::chrono::minutes(10), std::nullopt};
  auto hidden = partialClient->query(kTriton, now());
  ASSERT_TRUE(hidden.ok()) << hidden.status().toString();
  EXPECT_TRUE((*hidden)->vector.empty());
  EXPECT_FALSE((*hidden)->warnings.empty());
  auto hiddenNames = partialClient->labelValues("__name__", {kTriton}, window);
  ASSERT_TRUE(hiddenNames.ok()) << hiddenNames.status().toString();
  EXPECT_TRUE(hiddenNames->empty());

  auto failed = strictClient->query(kTriton, now());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failureKindOf(failed.status()), FailureKind::kPrometheusError)
      << failed.status().toString();
  auto failedNames = strictClient->labelValues("__name__", {kTriton}, window);
  ASSERT_FALSE(failedNames.ok());
  EXPECT_EQ(failureKindOf(failedNames.status()), FailureKind::kPrometheusError)
      << failedNames.status().toString();
}

TEST_F(RealPrometheusTest, CachedClientSendsOneQueryForManyCallers) {
  auto http = clientFor(options());
  ASSERT_TRUE(waitForSamples(*http, kTriton, 2).ok());
  CacheOptions cacheOptions;
  cacheOptions.ttl = std::chrono::minutes(1);
  CachingClient cache(std::shared_ptr<Client>(std::move(http)), cacheOptions);
  Timestamp at = now();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 50; ++j) {
        if (cache.query(kTriton, at).ok()) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 400);
  auto stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits + stats.coalesced, 399u);
}

TEST_F(RealPrometheusTest, StoppedPrometheusIsAConnectionError) {
  PrometheusServerOptions o;
  auto server = PrometheusServer::start(o);
  ASSERT_TRUE(server.ok()) << server.status().toString();
  PrometheusOptions po;
  po.url = (*server)->url();
  auto client = clientFor(po);
  ASSERT_TRUE(client->query("1", now()).ok());
  (*server)->stop();
  auto result = client->query("1", now());
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kConnection) << result.status().toString();
  EXPECT_EQ(result.status().httpCode(), 503);
}

TEST(RealPrometheusServing, PathPrefix) {
  if (test::backendUnderTest() != test::Backend::kPrometheus) GTEST_SKIP() << kOwnServingFlags;
  if (!PrometheusServer::available()) GTEST_SKIP() << "prometheus is not installed";
  PrometheusServerOptions o;
  o.routePrefix = "/prom";
  auto server = PrometheusServer::start(o);
  ASSERT_TRUE(server.ok()) << server.status().toString();
  PrometheusOptions po;
  po.url = (*server)->url() + "/";
  auto client = clientFor(po);
  auto result = client->query("1", now());
  ASSERT_TRUE(result.ok()) << result.status().toString();
  po.url = "http://127.0.0.1:" + std::to_string((*server)->port());
  auto withoutPrefix = clientFor(po)->query("1", now());
  EXPECT_EQ(failureKindOf(withoutPrefix.status()), FailureKind::kHttpStatus)
      << "the wrong prefix is a 404, not data: " << withoutPrefix.status().toString();
}

TEST(RealPrometheusServing, BasicAuthFromHeaderAndAuthConfig) {
  if (test::backendUnderTest() != test::Backend::kPrometheus) GTEST_SKIP() << kOwnServingFlags;
  if (!PrometheusServer::available()) GTEST_SKIP() << "prometheus is not installed";
  PrometheusServerOptions o;
  o.webConfig = std::string("basic_auth_users:\n  gpuscale: ") + kSecretHash + "\n";
  o.probeAuthorization = "Basic Z3B1c2NhbGU6c2VjcmV0";  // gpuscale:secret
  auto server = PrometheusServer::start(o);
  ASSERT_TRUE(server.ok()) << server.status().toString();
  PrometheusOptions po;
  po.url = (*server)->url();
  auto anonymous = clientFor(po)->query("1", now());
  EXPECT_EQ(failureKindOf(anonymous.status()), FailureKind::kHttpStatus)
      << anonymous.status().toString();
  po.headers = {{"Authorization", o.probeAuthorization}};
  EXPECT_TRUE(clientFor(po)->query("1", now()).ok()) << "--prometheus-header Authorization";

  std::string dir = test::makeTempDir("gpuscale-auth-");
  std::ofstream(dir + "/auth.yaml") << "current-context: p\n"
                                       "contexts: [{name: p, context: {cluster: c, user: u}}]\n"
                                       "clusters: [{name: c, cluster: {server: http://x}}]\n"
                                       "users: [{name: u, user: {username: gpuscale, password: "
                                       "secret}}]\n";
  PrometheusOptions fromConfig;
  fromConfig.url = (*server)->url();
  fromConfig.authConfigFile = dir + "/auth.yaml";
  auto result = clientFor(fromConfig)->query("1", now());
  EXPECT_TRUE(result.ok()) << "--prometheus-auth-config: " << result.status().toString();
  test::removeTree(dir);
}

TEST(RealPrometheusServing, TlsServerVerification) {
  if (test::backendUnderTest() != test::Backend::kPrometheus) GTEST_SKIP() << kOwnServingFlags;
  if (!PrometheusServer::available()) GTEST_SKIP() << "prometheus is not installed";
  std::string dir = test::makeTempDir("gpuscale-tls-");
  auto certs = test::generateTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status().toString();
  for (bool requireClientCert : {false, true}) {
    PrometheusServerOptions o;
    o.tls = true;
    o.webConfig = "tls_server_config:\n  cert_file: " + certs->serverCert +
                  "\n  key_file: " + certs->serverKey + "\n";
    if (requireClientCert) {
      o.webConfig +=
          "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + certs->caCert +
          "\n";
      o.probeClientCert = certs->clientCert;
      o.probeClientKey = certs->clientKey;
    }
    auto server = PrometheusServer::start(o);
    ASSERT_TRUE(server.ok()) << server.status().toString();
    struct Row {
      const char* what;
      bool ca;
      bool clientCert;
      bool insecure;
      bool wantOk;
    } rows[] = {
        {"CA and client certificate", true, true, false, true},
        {"no client certificate", true, false, false, !requireClientCert},
        {"unknown CA", false, true, false, false},
        {"insecure skips server verification", false, true, true, true},
    };
    for (const auto& row : rows) {
      PrometheusOptions po;
      po.url = (*server)->url();
      if (row.ca) po.caFile = certs->caCert;
      if (row.clientCert) {
        po.clientCertFile = certs->clientCert;
        po.clientKeyFile = certs->clientKey;
      }
      po.insecureSkipTlsVerify = row.insecure;
      auto result = clientFor(po)->query("1", now());
      EXPECT_EQ(result.ok(), row.wantOk)
          << row.what << " (client cert required: " << requireClientCert
          << "): " << result.status().toString();
      if (!row.wantOk) {
        EXPECT_EQ(failureKindOf(result.status()), FailureKind::kConnection) << row.what;
      }
    }
  }
  test::removeTree(dir);
}

}  // namespace real_prometheus_test
}  // namespace gpuscale::prom
