// metrics.k8s.io end to end: a real Prometheus scraping cAdvisor- and kubelet-style series from a
// live exporter (a cpu counter that grows at a known rate, working-set gauges), the real
// gpuscale-adapter in standalone mode serving prometheus-adapter's resourceRules, checked with
// kubectl get --raw (and curl for status codes) against the documents metrics-server writes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <regex>
#include <thread>

#include "adapter_process.h"
#include "gpuscale/core/quantity.h"
#include "support/exporter_server.h"
#include "support/prometheus_server.h"

namespace gpuscale::adapter::testing {
namespace adapter_resource_metrics_test {

constexpr char kApi[] = "/apis/metrics.k8s.io/v1beta1";

// prometheus-adapter's default resourceRules (its deploy manifests), with a 10 s rate window for a
// 1 s scrape interval.
constexpr char kRules[] = R"(resourceRules:
  cpu:
    containerQuery: 'sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{<<.LabelMatchers>>,container!="",pod!=""}[10s]))'
    nodeQuery: 'sum by (<<.GroupBy>>) (rate(node_cpu_usage_seconds_total{<<.LabelMatchers>>}[10s]))'
    resources: &resources
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  memory:
    containerQuery: 'sum by (<<.GroupBy>>) (container_memory_working_set_bytes{<<.LabelMatchers>>,container!="",pod!=""})'
    nodeQuery: 'sum by (<<.GroupBy>>) (node_memory_working_set_bytes{<<.LabelMatchers>>})'
    resources: *resources
    containerLabel: container
  window: 10s
)";

using Labels = test::ExporterServer::Labels;

Labels containerLabels(const std::string& ns, const std::string& pod, const std::string& name) {
  return {{"namespace", ns}, {"pod", pod}, {"container", name}};
}

// Timestamps and cpu values (a measured rate) vary; the rest is compared byte for byte.
std::string normalised(const std::string& body) {
  static const std::regex kTimes(R"re("(timestamp|creationTimestamp)":"[0-9T:Z-]+")re");
  static const std::regex kCpu(R"re("cpu":"[0-9]+[nuGMk]?m?")re");
  return std::regex_replace(std::regex_replace(body, kTimes, R"("$1":"T")"), kCpu, R"("cpu":"C")");
}

class AdapterResourceMetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // web-1 (two containers) and db-0 in default, api-0 in other; web-new has no memory series yet
    // (left out, never reported with 0); two nodes, n2 without memory.
    opened_ = ScrapedExporter::open([](test::ExporterServer& exporter) {
                exporter_ = &exporter;
                exporter.set("container_memory_working_set_bytes",
                             containerLabels("default", "web-1", "app"), 4096);
                exporter.set("container_memory_working_set_bytes",
                             containerLabels("default", "web-1", "sidecar"), 1048576);
                exporter.set("container_memory_working_set_bytes",
                             containerLabels("default", "db-0", "db"), 1e6);
                exporter.set("container_memory_working_set_bytes",
                             containerLabels("other", "api-0", "api"), 2097152);
                exporter.set("node_memory_working_set_bytes", {{"node", "n1"}}, 2147483648.0);
                exporter.set("kube_pod_labels",
                             {{"namespace", "default"}, {"pod", "web-1"}, {"label_app", "web"}}, 1);
                exporter.set("kube_pod_labels",
                             {{"namespace", "default"}, {"pod", "db-0"}, {"label_app", "db"}}, 1);
                tick(0);
              }).release();
    if (opened_ == nullptr || !opened_->prometheus) return;
    dir_ = &opened_->dir;
    prometheus_ = opened_->prometheus.get();
    running_ = true;
    ticker_ = new std::thread([] {
      const auto start = std::chrono::steady_clock::now();
      while (running_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        tick(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    });
    writeFile(dir_->file("rules.yaml"), kRules);
    adapter_ = new AdapterProcess(dir_->file("rules.yaml"), prometheus_->url());
    // Two scrapes for a rate.
    ASSERT_TRUE(gpuscale::testing::waitUntil(
        [] {
          return curl(adapter_->url(std::string(kApi) + "/namespaces/default/pods/db-0")).code ==
                 200;
        },
        std::chrono::seconds(60)))
        << adapter_->log();
  }
  static void TearDownTestSuite() {
    running_ = false;
    if (ticker_ != nullptr) ticker_->join();
    delete ticker_;
    delete adapter_;
    delete opened_;
  }
  void SetUp() override {
    if (adapter_ == nullptr) GTEST_SKIP() << "prometheus or kubectl not installed";
  }

  // CPU counters at `seconds` since the start: each container uses a known number of cores.
  static void tick(double seconds) {
    const auto counter = [&](const Labels& labels, double cores) {
      exporter_->set("container_cpu_usage_seconds_total", labels, cores * seconds, "counter");
    };
    counter(containerLabels("default", "web-1", "app"), 0.25);
    counter(containerLabels("default", "web-1", "sidecar"), 0.01);
    counter(containerLabels("default", "db-0", "db"), 1);
    counter(containerLabels("default", "web-new", "app"), 0.5);
    counter(containerLabels("other", "api-0", "api"), 0.125);
    exporter_->set("node_cpu_usage_seconds_total", {{"node", "n1"}}, 1.5 * seconds, "counter");
    exporter_->set("node_cpu_usage_seconds_total", {{"node", "n2"}}, 0.5 * seconds, "counter");
  }

  // kubectl get --raw (exit 0, the body) and curl (the status code); the body normalised.
  static std::string get(const std::string& path, int code = 200) {
    const std::string full = std::string(kApi) + path;
    HttpReply reply = curl(adapter_->url(full));
    EXPECT_EQ(reply.code, code) << full << "\n" << reply.body;
    if (code == 200) {
      ProcessResult k = adapter_->kubectl(full);
      EXPECT_EQ(k.exitCode, 0) << k.err;
      EXPECT_EQ(normalised(k.out), normalised(reply.body)) << full;
    }
    return normalised(reply.body);
  }

  static ScrapedExporter* opened_;
  static gpuscale::testing::TempDir* dir_;
  static test::ExporterServer* exporter_;
  static test::PrometheusServer* prometheus_;
  static AdapterProcess* adapter_;
  static std::thread* ticker_;
  static std::atomic<bool> running_;
};

ScrapedExporter* AdapterResourceMetricsTest::opened_ = nullptr;
gpuscale::testing::TempDir* AdapterResourceMetricsTest::dir_ = nullptr;
test::ExporterServer* AdapterResourceMetricsTest::exporter_ = nullptr;
test::PrometheusServer* AdapterResourceMetricsTest::prometheus_ = nullptr;
AdapterProcess* AdapterResourceMetricsTest::adapter_ = nullptr;
std::thread* AdapterResourceMetricsTest::ticker_ = nullptr;
std::atomic<bool> AdapterResourceMetricsTest::running_{false};

constexpr char kWeb1[] =
    R"({"metadata":{"name":"web-1","namespace":"default","creationTimestamp":"T"},"timestamp":"T","window":"10s","containers":[{"name":"app","usage":{"cpu":"C","memory":"4Ki"}},{"name":"sidecar","usage":{"cpu":"C","memory":"1Mi"}}]})";
constexpr char kDb0[] =
    R"({"metadata":{"name":"db-0","namespace":"default","creationTimestamp":"T"},"timestamp":"T","window":"10s","containers":[{"name":"db","usage":{"cpu":"C","memory":"1000000"}}]})";
constexpr char kApi0[] =
    R"({"metadata":{"name":"api-0","namespace":"other","creationTimestamp":"T"},"timestamp":"T","window":"10s","containers":[{"name":"api","usage":{"cpu":"C","memory":"2Mi"}}]})";

std::string podList(const std::vector<std::string>& items) {
  std::string out =
      R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}\n";
}

TEST_F(AdapterResourceMetricsTest, Discovery) {
  EXPECT_EQ(
      get(""),
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[{"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics","verbs":["get","list"]},{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]})"
      "\n");
  ProcessResult groups = adapter_->kubectl("/apis");
  EXPECT_NE(
      groups.out.find(
          R"({"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}])"),
      std::string::npos)
      << groups.out;
}

TEST_F(AdapterResourceMetricsTest, PodsOfOneNamespaceAndOfAll) {
  // web-new has cpu but no memory: left out, as metrics-server leaves out pods it lacks data for.
  EXPECT_EQ(get("/namespaces/default/pods"), podList({kDb0, kWeb1}));
  EXPECT_EQ(get("/pods"), podList({kDb0, kWeb1, kApi0}));
  EXPECT_EQ(get("/namespaces/nowhere/pods"), podList({}));
}

TEST_F(AdapterResourceMetricsTest, SelectorsAndNamedPods) {
  EXPECT_EQ(get("/namespaces/default/pods?labelSelector=app%3Dweb"), podList({kWeb1}));
  EXPECT_EQ(get("/namespaces/default/pods?fieldSelector=metadata.name%3Ddb-0"), podList({kDb0}));
  std::string one = get("/namespaces/default/pods/db-0");
  EXPECT_EQ(one, R"({"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1",)" +
                     std::string(kDb0).substr(1) + "\n");
  EXPECT_NE(get("/namespaces/default/pods/web-new", 404)
                .find(R"(podmetrics.metrics.k8s.io \"default/web-new\" not found)"),
            std::string::npos);
}

// db-0 uses one core. rate() divides by its whole range, so right after the first scrapes it reads
// low: wait until the 10 s range is covered.
TEST_F(AdapterResourceMetricsTest, CpuIsTheMeasuredRate) {
  static const std::regex kCpu(R"re("cpu":"([^"]+)")re");
  std::string body;
  double cores = 0;
  const bool settled = gpuscale::testing::waitUntil(
      [&] {
        body = curl(adapter_->url(std::string(kApi) + "/namespaces/default/pods/db-0")).body;
        std::smatch match;
        if (!std::regex_search(body, match, kCpu)) return false;
        auto cpu = core::Quantity::parse(match[1].str());
        cores = cpu.ok() ? cpu->toDouble() : 0;
        return cores > 0.9 && cores < 1.1;
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(settled) << cores << "\n" << body;
}

TEST_F(AdapterResourceMetricsTest, Nodes) {
  const std::string n1 =
      R"({"metadata":{"name":"n1","creationTimestamp":"T"},"timestamp":"T","window":"10s","usage":{"cpu":"C","memory":"2Gi"}})";
  EXPECT_EQ(
      get("/nodes"),
      R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)" +
          n1 + "]}\n");
  EXPECT_EQ(get("/nodes/n1"), R"({"kind":"NodeMetrics","apiVersion":"metrics.k8s.io/v1beta1",)" +
                                  n1.substr(1) + "\n");
  get("/nodes/n2", 404);  // no memory series
}

TEST_F(AdapterResourceMetricsTest, PrometheusDownIsAnErrorAndTheFlagTurnsTheApiOff) {
  AdapterProcess down(dir_->file("rules.yaml"),
                      "http://127.0.0.1:" + std::to_string(gpuscale::testing::freeLoopbackPort()));
  HttpReply failed = curl(down.url(std::string(kApi) + "/namespaces/default/pods"));
  EXPECT_EQ(failed.code, 503) << failed.body;
  EXPECT_NE(failed.body.find("unable to fetch metrics"), std::string::npos) << failed.body;

  AdapterProcess off(dir_->file("rules.yaml"), prometheus_->url(), {"--resource-metrics=false"});
  EXPECT_EQ(curl(off.url(kApi)).code, 404);
  EXPECT_EQ(curl(off.url("/apis")).body.find(R"("name":"metrics.k8s.io")"), std::string::npos);
}

}  // namespace adapter_resource_metrics_test
}  // namespace gpuscale::adapter::testing
