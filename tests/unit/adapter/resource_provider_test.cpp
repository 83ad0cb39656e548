#include "gpuscale/adapter/resource_provider.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>

#include "fakes/fake_kube_client.h"
#include "fakes/prom_fake_client.h"
#include "gpuscale/adapter/kube_object_lister.h"
#include "gpuscale/adapter/standalone_object_lister.h"
#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace resource_provider_test {

using testing::compile;
using testing::expectFailure;
using testing::sample;

constexpr char kResourceRules[] = R"(resourceRules:
  cpu:
    containerLabel: container
    containerQuery: 'sum(cpu{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
    nodeQuery: 'sum(node_cpu{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
    resources: {overrides: {namespace: {resource: namespace}, node: {resource: node}, pod: {resource: pod}}}
  memory:
    containerLabel: container
    containerQuery: 'sum(mem{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
    nodeQuery: 'sum(node_mem{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
    resources: {overrides: {namespace: {resource: namespace}, node: {resource: node}, pod: {resource: pod}}}
  window: 5m
)";

kube::Object pod(const std::string& ns, const std::string& name, const std::string& phase) {
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", "web"}}}}},
          {"status", {{"phase", phase}}}};
}

prom::Sample container(const std::string& podName, const std::string& name, double value) {
  return sample({{"pod", podName}, {"container", name}}, value);
}

std::vector<std::string> podNames(const std::vector<apiserver::PodMetrics>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p.namespaceName + "/" + p.name);
  return out;
}

class ResourceProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto pods = [](const std::string& ns) {
      return kube::ResourceRef::collection("", "v1", "pods", ns);
    };
    ASSERT_TRUE(kube_->create(pods("default"), pod("default", "web-1", "Running")).ok());
    ASSERT_TRUE(kube_->create(pods("default"), pod("default", "web-2", "Running")).ok());
    ASSERT_TRUE(kube_->create(pods("default"), pod("default", "web-3", "Pending")).ok());
    ASSERT_TRUE(kube_->create(pods("other"), pod("other", "web-9", "Running")).ok());
    const auto nodes = kube::ResourceRef::collection("", "v1", "nodes");
    ASSERT_TRUE(
        kube_->create(nodes, {{"metadata", {{"name", "n1"}, {"labels", {{"zone", "a"}}}}}}).ok());
    ASSERT_TRUE(kube_->create(nodes, {{"metadata", {{"name", "n2"}}}}).ok());
  }

  ResourceProvider provider(std::shared_ptr<ObjectLister> lister) {
    return ResourceProvider([this] { return rules_; }, k8s::BuiltinResourceTable::instance(),
                            std::move(lister), runner_);
  }
  ResourceProvider kubeProvider() { return provider(std::make_shared<KubeObjectLister>(kube_)); }

  std::shared_ptr<const rules::RuleSet> rules_ = compile(kResourceRules);
  std::shared_ptr<gpuscale::testing::FakeKubeClient> kube_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<fakes::FakePrometheusClient> prometheus_ =
      std::make_shared<fakes::FakePrometheusClient>();
  std::shared_ptr<QueryRunner> runner_ =
      std::make_shared<QueryRunner>(prometheus_, nullptr, nullptr);
};

TEST_F(ResourceProviderTest, ListsRunningPodsWithDataAndTheirLabels) {
  // web-3 is Pending: not asked for. web-2 has no data: left out.
  prometheus_->setVector(R"(sum(cpu{namespace="default",pod=~"web-1|web-2"}) by (pod,container))",
                         {container("web-1", "app", 0.25)});
  prometheus_->setVector(R"(sum(mem{namespace="default",pod=~"web-1|web-2"}) by (pod,container))",
                         {container("web-1", "app", 4096)});
  auto pods = kubeProvider().listPodMetrics("default", {});
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  ASSERT_EQ(podNames(*pods), std::vector<std::string>{"default/web-1"});
  const apiserver::PodMetrics& web1 = pods->front();
  EXPECT_EQ(web1.labels, (core::Labels{{"app", "web"}}));
  EXPECT_EQ(web1.window, std::chrono::minutes(5));
  ASSERT_EQ(web1.containers.size(), 1u);
  EXPECT_EQ(web1.containers[0].usage.cpu.toString(), "250m");
  EXPECT_EQ(web1.containers[0].usage.memory.toString(), "4Ki");
}

TEST_F(ResourceProviderTest, EveryNamespaceIsOneQueryPairPerNamespace) {
  prometheus_->setVector(R"(sum(cpu{namespace="default",pod=~"web-1|web-2"}) by (pod,container))",
                         {container("web-1", "app", 1), container("web-2", "app", 2)});
  prometheus_->setVector(R"(sum(mem{namespace="default",pod=~"web-1|web-2"}) by (pod,container))",
                         {container("web-1", "app", 1), container("web-2", "app", 2)});
  prometheus_->setVector(R"(sum(cpu{namespace="other",pod="web-9"}) by (pod,container))",
                         {container("web-9", "app", 1)});
  prometheus_->setVector(R"(sum(mem{namespace="other",pod="web-9"}) by (pod,container))",
                         {container("web-9", "app", 1)});
  auto pods = kubeProvider().listPodMetrics("", {});
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  EXPECT_EQ(podNames(*pods),
            (std::vector<std::string>{"default/web-1", "default/web-2", "other/web-9"}));
  EXPECT_EQ(prometheus_->totalCalls(), 4u);
}

TEST_F(ResourceProviderTest, NamedPods) {
  prometheus_->setVector(R"(sum(cpu{namespace="default",pod="web-1"}) by (pod,container))",
                         {container("web-1", "app", 1)});
  prometheus_->setVector(R"(sum(mem{namespace="default",pod="web-1"}) by (pod,container))",
                         {container("web-1", "app", 1)});
  ResourceProvider resources = kubeProvider();
  auto web1 = resources.getPodMetrics("default", "web-1");
  ASSERT_TRUE(web1.ok()) << web1.status().message();
  EXPECT_EQ(web1->labels, (core::Labels{{"app", "web"}}));
  expectFailure(resources.getPodMetrics("default", "web-2"), 404,
                R"(podmetrics.metrics.k8s.io "default/web-2" not found)");
  expectFailure(resources.getPodMetrics("default", "web-3"), 404, R"(pods "web-3" not found)");
  expectFailure(resources.getPodMetrics("default", "nope"), 404, R"(pods "nope" not found)");
}

TEST_F(ResourceProviderTest, FailuresAreErrorsNotEmptyLists) {
  prometheus_->setDefaultError(prom::failure(prom::FailureKind::kConnection, "connection refused"));
  expectFailure(kubeProvider().listPodMetrics("default", {}), 503, "unable to fetch metrics");
  expectFailure(kubeProvider().listNodeMetrics({}), 503, "unable to fetch metrics");

  rules_ = compile(testing::kHttpRequestsRules);
  expectFailure(kubeProvider().listPodMetrics("default", {}), 503, "no resourceRules");
}

TEST_F(ResourceProviderTest, NotANumberLeavesThePodOutAndIsCounted) {
  auto registry = std::make_shared<prometheus::Registry>();
  runner_ = std::make_shared<QueryRunner>(prometheus_, nullptr, registry);
  prometheus_->setVector(R"(sum(cpu{namespace="default",pod=~"web-1|web-2"}) by (pod,container))",
                         {container("web-1", "app", std::nan("")), container("web-2", "app", 1)});
  prometheus_->setVector(R"(sum(mem{namespace="default",pod=~"web-1|web-2"}) by (pod,container))",
                         {container("web-1", "app", 1), container("web-2", "app", 1)});
  auto pods = kubeProvider().listPodMetrics("default", {});
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  EXPECT_EQ(podNames(*pods), std::vector<std::string>{"default/web-2"});
  const std::string exposition = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_NE(exposition.find(R"(gpuscale_adapter_nan_values_total{api="resource"} 1)"),
            std::string::npos)
      << exposition;
}

TEST_F(ResourceProviderTest, Nodes) {
  prometheus_->setVector(R"(sum(node_cpu{node=~"n1|n2"}) by (node))",
                         {sample({{"node", "n1"}}, 1.5), sample({{"node", "n2"}}, 1)});
  prometheus_->setVector(R"(sum(node_mem{node=~"n1|n2"}) by (node))",
                         {sample({{"node", "n1"}}, 1048576)});
  prometheus_->setVector(R"(sum(node_cpu{node="n1"}) by (node))", {sample({{"node", "n1"}}, 1.5)});
  prometheus_->setVector(R"(sum(node_mem{node="n1"}) by (node))",
                         {sample({{"node", "n1"}}, 1048576)});
  ResourceProvider resources = kubeProvider();
  auto nodes = resources.listNodeMetrics({});
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 1u);  // n2 has no memory
  EXPECT_EQ(nodes->front().name, "n1");
  EXPECT_EQ(nodes->front().labels, (core::Labels{{"zone", "a"}}));
  EXPECT_EQ(nodes->front().usage.cpu.toString(), "1500m");
  EXPECT_EQ(nodes->front().usage.memory.toString(), "1Mi");
  EXPECT_TRUE(resources.getNodeMetrics("n1").ok());
  expectFailure(resources.getNodeMetrics("n2"), 404,
                R"(nodemetrics.metrics.k8s.io "n2" not found)");
  expectFailure(resources.getNodeMetrics("n9"), 404, R"(nodes "n9" not found)");
}

TEST_F(ResourceProviderTest, StandaloneAsksPrometheusForEveryPod) {
  ResourceProvider resources = provider(std::make_shared<StandaloneObjectLister>(runner_));
  prometheus_->setVector(R"(sum(cpu{namespace="default",pod!=""}) by (pod,container))",
                         {container("a", "app", 1)});
  prometheus_->setVector(R"(sum(mem{namespace="default",pod!=""}) by (pod,container))",
                         {container("a", "app", 1)});
  auto one = resources.listPodMetrics("default", {});
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(podNames(*one), std::vector<std::string>{"default/a"});

  // Every namespace: one query pair without a namespace matcher, grouped by namespace too.
  const auto spanning = [](const std::string& ns, const std::string& name) {
    return sample({{"pod", name}, {"container", "app"}, {"namespace", ns}}, 1);
  };
  prometheus_->setVector(R"(sum(cpu{pod!=""}) by (pod,container,namespace))",
                         {spanning("x", "a"), spanning("b", "a")});
  prometheus_->setVector(R"(sum(mem{pod!=""}) by (pod,container,namespace))",
                         {spanning("x", "a"), spanning("b", "a")});
  auto all = resources.listPodMetrics("", {});
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(podNames(*all), (std::vector<std::string>{"b/a", "x/a"}));
}

}  // namespace resource_provider_test
}  // namespace gpuscale::adapter
