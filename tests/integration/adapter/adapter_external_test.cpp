// external.metrics.k8s.io end to end: a real Prometheus scraping a gauge exporter, the real
// gpuscale-adapter serving external rules (namespaced and not, vector and scalar, metric label
// selectors, missing and NaN/±Inf data), a second real gpuscale-adapter as the fallback server the
// first forwards unknown external metrics to (TLS verified against the CA that signed the second
// one's serving certificate), and an adapter started with a prometheus-adapter Deployment's
// arguments. Checked with kubectl get --raw and curl.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "adapter_process.h"
#include "fakes/test_pki.h"
#include "support/exporter_server.h"
#include "support/prometheus_server.h"
#include "support/thanos.h"
#include "support/victoriametrics.h"

namespace gpuscale::adapter::testing {
namespace adapter_external_test {

constexpr char kExternal[] = "/apis/external.metrics.k8s.io/v1beta1";

// The local adapter's rules: every shape the external API has.
constexpr char kLocalRules[] = R"(
externalRules:
- seriesQuery: 'queue_messages{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  name: {matches: "^queue_messages$", as: "queue_messages"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
- seriesQuery: 'queue_messages{namespace!=""}'
  resources: {namespaced: false}
  name: {matches: "^queue_messages$", as: "queue_messages_all_namespaces"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
- seriesQuery: 'queue_messages{namespace!=""}'
  resources: {namespaced: false}
  name: {matches: "^queue_messages$", as: "queue_messages_total"}
  metricsQuery: 'scalar(sum(<<.Series>>{<<.LabelMatchers>>}))'
- seriesQuery: 'queue_messages{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  name: {matches: "^queue_messages$", as: "queue_messages_nan"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue) * 0 / 0'
- seriesQuery: 'queue_messages{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  name: {matches: "^queue_messages$", as: "queue_messages_inf"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue) / 0'
)";

// The fallback adapter's rules: one metric only it serves, and one whose name clashes with ours
// (values x1000, so the answer shows who served it).
constexpr char kRemoteRules[] = R"(
externalRules:
- seriesQuery: 'queue_messages{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  name: {matches: "^queue_messages$", as: "remote_queue_messages"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue, topic)'
- seriesQuery: 'queue_messages{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  name: {matches: "^queue_messages$", as: "queue_messages"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue) * 1000'
)";

std::string item(const std::string& metric, const std::string& labels, const std::string& value) {
  return R"({"metricName":")" + metric + R"(","metricLabels":)" + labels +
         R"(,"timestamp":"T","value":")" + value + R"("})";
}

std::string list(const std::vector<std::string>& items) {
  std::string out =
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "," : "") + items[i];
  return out + "]}\n";
}

std::string notFound(const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message +
         R"(","reason":"NotFound","code":404})"
         "\n";
}

// "queue=value" pairs of a multi-item answer, sorted (Prometheus does not order aggregations).
std::vector<std::string> queueValues(const std::string& body) {
  static const std::regex kItem(R"re("queue":"([^"]+)"\},"timestamp":"T","value":"([^"]+)")re");
  std::vector<std::string> out;
  for (std::sregex_iterator it(body.begin(), body.end(), kItem), end; it != end; ++it) {
    out.push_back((*it)[1].str() + "=" + (*it)[2].str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every external metric is listed as namespaced (only the namespaced path exists), as
// prometheus-adapter lists them, `namespaced: false` rules too.
std::string resourceEntry(const std::string& name) {
  return R"({"name":")" + name +
         R"(","singularName":"","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]})";
}

std::string resourceList(const std::vector<std::string>& entries) {
  std::string out =
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[)";
  for (size_t i = 0; i < entries.size(); ++i) out += (i > 0 ? "," : "") + entries[i];
  return out + "]}\n";
}

const std::string kLocalDiscovery = resourceList({
    resourceEntry("queue_messages"),
    resourceEntry("queue_messages_all_namespaces"),
    resourceEntry("queue_messages_inf"),
    resourceEntry("queue_messages_nan"),
    resourceEntry("queue_messages_total"),
});
// Ours, then the fallback's metrics we do not serve (queue_messages clashes: ours wins).
const std::string kMergedDiscovery = resourceList({
    resourceEntry("queue_messages"),
    resourceEntry("queue_messages_all_namespaces"),
    resourceEntry("queue_messages_inf"),
    resourceEntry("queue_messages_nan"),
    resourceEntry("queue_messages_total"),
    resourceEntry("remote_queue_messages"),
});

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

class AdapterExternalTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    opened_ = ScrapedExporter::open([](test::ExporterServer& exporter) {
                exporter.set("queue_messages",
                             {{"namespace", "jobs"}, {"queue", "orders"}, {"topic", "t1"}}, 5);
                exporter.set("queue_messages",
                             {{"namespace", "jobs"}, {"queue", "mail"}, {"topic", "t2"}}, 3);
                exporter.set("queue_messages",
                             {{"namespace", "billing"}, {"queue", "orders"}, {"topic", "t1"}}, 7);
                exporter.set("queue_messages",
                             {{"namespace", "billing"}, {"queue", "audit"}, {"topic", "t3"}}, 2);
              }).release();
    if (opened_ == nullptr || !opened_->prometheus) return;
    dir_ = &opened_->dir;
    prometheus_ = opened_->prometheus.get();

    // The fallback serves with a certificate for 127.0.0.1 signed by a CA the local adapter trusts.
    auto ca = gpuscale::testing::makeCa("fallback-ca");
    gpuscale::testing::CertificateSpec serving;
    serving.commonName = "fallback";
    serving.clientAuth = false;
    serving.ipAddresses = {"127.0.0.1"};
    auto cert = gpuscale::testing::makeCertificate(serving, &ca);
    writeFile(dir_->file("ca.crt"), ca.certificatePem);
    writeFile(dir_->file("fallback.crt"), cert.certificatePem);
    writeFile(dir_->file("fallback.key"), cert.privateKeyPem);
    writeFile(dir_->file("remote.yaml"), kRemoteRules);
    remote_ = new AdapterProcess(dir_->file("remote.yaml"), test::adapterUrl(prometheus_->url()),
                                 {"--tls-cert-file", dir_->file("fallback.crt"),
                                  "--tls-private-key-file", dir_->file("fallback.key")});
    writeFile(dir_->file("local.yaml"), kLocalRules);
    local_ = new AdapterProcess(
        dir_->file("local.yaml"), test::adapterUrl(prometheus_->url()),
        {"--external-metrics-fallback-url", remote_->url(""), "--external-metrics-fallback-ca-file",
         dir_->file("ca.crt"), "--external-metrics-fallback-discovery-ttl=1s",
         "--external-metrics-fallback-timeout=3s"});
    // Discovery, a scrape that queries see (VictoriaMetrics shows new series ~10 s after their
    // first sample), and the fallback's list merged in.
    ASSERT_TRUE(gpuscale::testing::waitUntil(
        [] {
          auto values =
              curl(local_->url(std::string(kExternal) + "/namespaces/jobs/queue_messages"));
          return values.code == 200 && values.body.find(R"("value")") != std::string::npos &&
                 withoutTimestamps(curl(local_->url(kExternal)).body) == kMergedDiscovery;
        },
        std::chrono::seconds(60)))
        << curl(local_->url(std::string(kExternal) + "/namespaces/jobs/queue_messages")).body
        << curl(local_->url(kExternal)).body << local_->log() << remote_->log();
  }
  static void TearDownTestSuite() {
    delete local_;
    delete remote_;
    delete opened_;
  }
  void SetUp() override {
    if (local_ == nullptr) GTEST_SKIP() << "prometheus or kubectl not installed";
  }

  static std::string local(const std::string& path, int code = 200) {
    return kubectlAndCurl(*local_, std::string(kExternal) + path, code);
  }

  static ScrapedExporter* opened_;
  static gpuscale::testing::TempDir* dir_;
  static test::PrometheusServer* prometheus_;
  static AdapterProcess* remote_;
  static AdapterProcess* local_;
};

ScrapedExporter* AdapterExternalTest::opened_ = nullptr;
gpuscale::testing::TempDir* AdapterExternalTest::dir_ = nullptr;
test::PrometheusServer* AdapterExternalTest::prometheus_ = nullptr;
AdapterProcess* AdapterExternalTest::remote_ = nullptr;
AdapterProcess* AdapterExternalTest::local_ = nullptr;

TEST_F(AdapterExternalTest, DiscoveryListsEveryMetricAsNamespaced) {
  EXPECT_EQ(
      kubectlAndCurl(*remote_, kExternal),
      resourceList({resourceEntry("queue_messages"), resourceEntry("remote_queue_messages")}));
  EXPECT_EQ(local(""), kMergedDiscovery);
}

TEST_F(AdapterExternalTest, VectorItemsCarryTheirLabels) {
  EXPECT_EQ(local("/namespaces/jobs/queue_messages?labelSelector=queue%3Dorders"),
            list({item("queue_messages", R"({"queue":"orders"})", "5")}));
  EXPECT_EQ(queueValues(local("/namespaces/jobs/queue_messages")),
            (std::vector<std::string>{"mail=3", "orders=5"}));
  EXPECT_EQ(queueValues(local("/namespaces/billing/queue_messages")),
            (std::vector<std::string>{"audit=2", "orders=7"}));
}

TEST_F(AdapterExternalTest, MetricLabelSelectors) {
  struct Case {
    std::string selector;  // URL-encoded
    std::vector<std::string> jobs;
  };
  const std::vector<Case> cases = {
      {"queue%3D%3Dorders", {"orders=5"}},
      {"queue%21%3Dorders", {"mail=3"}},
      {"queue%20in%20(orders,mail)", {"mail=3", "orders=5"}},
      {"queue%20notin%20(orders)", {"mail=3"}},
      {"topic", {"mail=3", "orders=5"}},
      {"topic%3Dt2,queue%3Dmail", {"mail=3"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(queueValues(local("/namespaces/jobs/queue_messages?labelSelector=" + c.selector)),
              c.jobs)
        << c.selector;
  }
  // A selector no series matches is an empty list (missing data), never 0.
  EXPECT_EQ(local("/namespaces/jobs/queue_messages?labelSelector=%21topic"), list({}));
  // An unparsable selector is a 400 before any query.
  HttpReply bad = curl(local_->url(
      std::string(kExternal) + "/namespaces/jobs/queue_messages?labelSelector=queue%20in%20(a"));
  EXPECT_EQ(bad.code, 400) << bad.body;
}

TEST_F(AdapterExternalTest, NamespacedFalseQueriesEveryNamespace) {
  // jobs' orders (5) + billing's orders (7), asked from a namespace that has no data at all.
  EXPECT_EQ(
      local("/namespaces/elsewhere/queue_messages_all_namespaces?labelSelector=queue%3Dorders"),
      list({item("queue_messages_all_namespaces", R"({"queue":"orders"})", "12")}));
}

// VictoriaMetrics (MetricsQL) answers a scalar as a one-sample vector without labels, which is one
// item with empty labels instead of null ones.
TEST_F(AdapterExternalTest, ScalarIsOneItemWithNullLabels) {
  const char* labels = test::victoriaMetricsUnderTest() ? "{}" : "null";
  EXPECT_EQ(local("/namespaces/default/queue_messages_total"),
            list({item("queue_messages_total", labels, "17")}));
  EXPECT_EQ(local("/namespaces/default/queue_messages_total?labelSelector=topic%3Dt1"),
            list({item("queue_messages_total", labels, "12")}));
}

TEST_F(AdapterExternalTest, EmptyResultIsAnEmptyListAsPrometheusAdapterAnswers) {
  EXPECT_EQ(local("/namespaces/nowhere/queue_messages"), list({}));
  ProcessResult k = local_->kubectl(std::string(kExternal) + "/namespaces/nowhere/queue_messages");
  EXPECT_EQ(k.exitCode, 0) << k.err;
  HttpReply metrics = curl(local_->url("/metrics"));
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_empty_results_total"), std::string::npos);
}

// VictoriaMetrics drops NaN results itself, so none reaches the adapter's counter.
TEST_F(AdapterExternalTest, NaNAndInfAreLeftOutAndCounted) {
  for (std::string metric : {"queue_messages_nan", "queue_messages_inf"}) {
    EXPECT_EQ(local("/namespaces/jobs/" + metric), list({}));
  }
  HttpReply metrics = curl(local_->url("/metrics"));
  EXPECT_EQ(metrics.body.find("gpuscale_adapter_nan_values_total{api=\"external\"} 0") ==
                std::string::npos,
            !test::victoriaMetricsUnderTest());
  EXPECT_EQ(metrics.body.find("gpuscale_adapter_infinite_values_total{api=\"external\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("gpuscale_adapter_infinite_values_total{api=\"external\"}"),
            std::string::npos);
}

TEST_F(AdapterExternalTest, UnservedMetricsAreForwardedToTheFallback) {
  const std::string path = "/namespaces/jobs/remote_queue_messages?labelSelector=topic%20in%20(t1)";
  const std::string expected =
      list({item("remote_queue_messages", R"({"queue":"orders","topic":"t1"})", "5")});
  EXPECT_EQ(kubectlAndCurl(*remote_, std::string(kExternal) + path), expected);
  EXPECT_EQ(local(path), expected);
  // The fallback's own errors come back as its Status.
  EXPECT_EQ(local("/namespaces/jobs/nobody_serves_this", 404),
            notFound("the server could not find the metric nobody_serves_this for namespaces"));
  EXPECT_EQ(local("/namespaces/nowhere/remote_queue_messages"), list({}));
  // A name both serve is ours (the fallback's rule would say 5000).
  EXPECT_EQ(local("/namespaces/jobs/queue_messages?labelSelector=queue%3Dorders"),
            list({item("queue_messages", R"({"queue":"orders"})", "5")}));
  HttpReply metrics = curl(local_->url("/metrics"));
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_fallback_requests_total{code=\"200\"}"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_fallback_requests_total{code=\"404\"}"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_fallback_up 1"), std::string::npos);
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_fallback_metrics 2"), std::string::npos);
}

// A prometheus-adapter Deployment (the shape of its deploy/manifests and Helm chart), args only.
// The test replaces what must be local (rule file, Prometheus, port, certificate folder) and
// adds --standalone, as there is no Kubernetes API here.
constexpr char kPrometheusAdapterDeployment[] = R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prometheus-adapter
  namespace: monitoring
spec:
  template:
    spec:
      containers:
      - name: prometheus-adapter
        image: registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0
        args:
        - /adapter
        - --cert-dir=/var/run/serving-cert
        - --config=/etc/adapter/config.yaml
        - --logtostderr=true
        - --metrics-relist-interval=1m
        - --prometheus-url=https://prometheus.monitoring.svc:9090/
        - --secure-port=6443
        - --tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        - --v=4
        - --alsologtostderr
        - --log_dir
        - /var/log/adapter
        - --log_file=/var/log/adapter/adapter.log
        - --stderrthreshold
        - "2"
        - --skip_headers
        - --vmodule=provider=6
        - --one_output=true
        - --logtostderr
)";

std::vector<std::string> deploymentArgs() {
  static const std::set<std::string> kLocal = {"--cert-dir", "--config", "--prometheus-url",
                                               "--secure-port", "--metrics-relist-interval"};
  std::vector<std::string> args;
  bool inArgs = false;
  std::istringstream lines(kPrometheusAdapterDeployment);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("args:") != std::string::npos) {
      inArgs = true;
      continue;
    }
    const size_t dash = line.find("- ");
    if (!inArgs || dash == std::string::npos) continue;
    std::string arg = line.substr(dash + 2);
    if (arg.size() >= 2 && arg.front() == '"') arg = arg.substr(1, arg.size() - 2);
    if (kLocal.contains(arg.substr(0, arg.find('=')))) continue;
    args.push_back(arg);
  }
  return args;
}

TEST_F(AdapterExternalTest, StartsWithAPrometheusAdapterDeploymentsArguments) {
  std::vector<std::string> args = deploymentArgs();
  ASSERT_EQ(args.size(), 14u);
  AdapterProcess adapter(dir_->file("local.yaml"), test::adapterUrl(prometheus_->url()), args);
  ASSERT_TRUE(gpuscale::testing::waitUntil(
      [&] {
        return curl(adapter.url(std::string(kExternal) + "/namespaces/jobs/queue_messages")).code ==
               200;
      },
      std::chrono::seconds(60)))
      << adapter.log();
  EXPECT_EQ(kubectlAndCurl(adapter, kExternal), kLocalDiscovery);
  EXPECT_EQ(curl(adapter.url("/readyz")).code, 200);
  const std::string log = adapter.log();
  // --v and --tls-cipher-suites are implemented; the klog flags are ignored.
  for (std::string flag : {"--logtostderr", "--alsologtostderr", "--log_dir", "--log_file",
                           "--stderrthreshold", "--skip_headers", "--vmodule", "--one_output"}) {
    EXPECT_EQ(occurrences(log, "flag " + flag + " is ignored"), 1u) << flag << "\n" << log;
  }
  EXPECT_EQ(occurrences(log, " is ignored ("), 8u) << log;
}

// Last (gtest keeps declaration order): the fallback goes away.
TEST_F(AdapterExternalTest, FallbackDownDegradesToOurOwnListLoggedOnceAndCounted) {
  remote_->stop();
  ASSERT_TRUE(gpuscale::testing::waitUntil(
      [] { return withoutTimestamps(curl(local_->url(kExternal)).body) == kLocalDiscovery; },
      std::chrono::seconds(30)));
  // Several failed refreshes (TTL 1s) later: still our list, one warning.
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_EQ(local(""), kLocalDiscovery);
  }
  HttpReply forwarded =
      curl(local_->url(std::string(kExternal) + "/namespaces/jobs/remote_queue_messages"));
  EXPECT_EQ(forwarded.code, 503) << forwarded.body;
  EXPECT_NE(forwarded.body.find("unable to fetch metrics: external metrics fallback " +
                                remote_->url("") + " unreachable"),
            std::string::npos)
      << forwarded.body;
  // Our own metrics are untouched.
  EXPECT_EQ(local("/namespaces/jobs/queue_messages?labelSelector=queue%3Dorders"),
            list({item("queue_messages", R"({"queue":"orders"})", "5")}));
  EXPECT_EQ(occurrences(local_->log(), "discovery failed, serving our own external metrics only"),
            1u)
      << local_->log();
  HttpReply metrics = curl(local_->url("/metrics"));
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_fallback_up 0"), std::string::npos);
  EXPECT_EQ(metrics.body.find("gpuscale_adapter_external_fallback_discovery_failures_total 0"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("gpuscale_adapter_external_fallback_requests_total{code=\"503\"} 1"),
            std::string::npos);
  EXPECT_TRUE(local_->running());
}

}  // namespace adapter_external_test
}  // namespace gpuscale::adapter::testing
