#include "gpuscale/adapter/resource_metrics_assembly.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace resource_metrics_assembly_test {

using testing::sample;

TEST(UsageQuantity, AsMetricsServerRendersThem) {
  struct Case {
    std::string what;
    double value;
    std::string cpu;     // "" = no quantity
    std::string memory;  // "" = no quantity
  };
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"a quarter core: exact millicores print as m", 0.25, "250m", "0"},
      {"sub-millicore precision is kept in nanocores", 0.123456789, "123456789n", "0"},
      {"one core / one byte", 1, "1", "1"},
      {"0.0004 cores: the canonical suffix is u", 0.0004, "400u", "0"},
      {"float noise rounds to the nearest nanocore", 0.29, "290m", "0"},
      {"zero is a real zero", 0, "0", "0"},
      {"1 MiB", 1048576, "1048576", "1Mi"},
      {"1e6 bytes stay decimal", 1e6, "1M", "1000000"},
      {"4 KiB", 4096, "4096", "4Ki"},
      {"fractional bytes round", 1.5, "1500m", "2"},
      {"NaN is no value", nan, "", ""},
      {"+Inf is no value", inf, "", ""},
      {"negative usage is no value", -0.5, "", ""},
  };
  for (const Case& c : cases) {
    auto cpu = cpuUsageQuantity(c.value);
    auto memory = memoryUsageQuantity(c.value);
    EXPECT_EQ(cpu ? cpu->toString() : "", c.cpu) << c.what;
    EXPECT_EQ(memory ? memory->toString() : "", c.memory) << c.what;
  }
}

UsageSamples podSamples(const std::vector<prom::Sample>& samples, std::string nsLabel = "") {
  return UsageSamples{&samples, "pod", "container", std::move(nsLabel)};
}

// "ns/pod:container=cpu/memory ..." of the assembled pods, for compact expectations.
std::string describe(const std::vector<apiserver::PodMetrics>& pods) {
  std::string out;
  for (const auto& pod : pods) {
    if (!out.empty()) out += " ";
    out += pod.namespaceName + "/" + pod.name;
    for (const auto& container : pod.containers) {
      out += ":" + container.name + "=" + container.usage.cpu.toString() + "/" +
             container.usage.memory.toString();
    }
  }
  return out;
}

TEST(AssemblePodMetrics, GroupsContainersIntoPods) {
  struct Case {
    std::string what;
    std::vector<prom::Sample> cpu;
    std::vector<prom::Sample> memory;
    std::string want;
  };
  const double nan = std::nan("");
  const std::vector<Case> cases = {
      {"two pods, containers sorted by name",
       {sample({{"pod", "b"}, {"container", "main"}}, 0.5),
        sample({{"pod", "a"}, {"container", "sidecar"}}, 0.001),
        sample({{"pod", "a"}, {"container", "app"}}, 0.25)},
       {sample({{"pod", "a"}, {"container", "app"}}, 4096),
        sample({{"pod", "a"}, {"container", "sidecar"}}, 1048576),
        sample({{"pod", "b"}, {"container", "main"}}, 1e6)},
       "ns/a:app=250m/4Ki:sidecar=1m/1Mi ns/b:main=500m/1000000"},
      {"no memory at all: the pod is left out, never 0",
       {sample({{"pod", "a"}, {"container", "app"}}, 0.25)},
       {},
       ""},
      {"a container with cpu only leaves its pod out (metrics-server), not a made-up 0",
       {sample({{"pod", "a"}, {"container", "app"}}, 0.25),
        sample({{"pod", "a"}, {"container", "new"}}, 0.1),
        sample({{"pod", "b"}, {"container", "app"}}, 1)},
       {sample({{"pod", "a"}, {"container", "app"}}, 4096),
        sample({{"pod", "b"}, {"container", "app"}}, 4096)},
       "ns/b:app=1/4Ki"},
      {"a container with memory only leaves its pod out",
       {sample({{"pod", "a"}, {"container", "app"}}, 0.25)},
       {sample({{"pod", "a"}, {"container", "app"}}, 4096),
        sample({{"pod", "a"}, {"container", "other"}}, 4096)},
       ""},
      {"a NaN value leaves its pod out",
       {sample({{"pod", "a"}, {"container", "app"}}, nan)},
       {sample({{"pod", "a"}, {"container", "app"}}, 4096)},
       ""},
      {"a sample without the container label is container \"\"",
       {sample({{"pod", "a"}}, 2)},
       {sample({{"pod", "a"}}, 2048)},
       "ns/a:=2/2Ki"},
      {"samples without the pod label are ignored",
       {sample({{"container", "app"}}, 2), sample({{"pod", "a"}, {"container", "app"}}, 1)},
       {sample({{"pod", "a"}, {"container", "app"}}, 1024)},
       "ns/a:app=1/1Ki"},
      {"the last sample of a container wins",
       {sample({{"pod", "a"}, {"container", "app"}}, 1),
        sample({{"pod", "a"}, {"container", "app"}}, 3)},
       {sample({{"pod", "a"}, {"container", "app"}}, 1024)},
       "ns/a:app=3/1Ki"},
  };
  for (const Case& c : cases) {
    auto pods =
        assemblePodMetrics("ns", podSamples(c.cpu), podSamples(c.memory), std::chrono::minutes(5));
    EXPECT_EQ(describe(pods), c.want) << c.what;
  }
}

TEST(AssemblePodMetrics, NamespacesFromTheLabelWhenTheQuerySpannedThem) {
  const std::vector<prom::Sample> cpu = {
      sample({{"pod", "a"}, {"container", "c"}, {"namespace", "z"}}, 1),
      sample({{"pod", "a"}, {"container", "c"}, {"namespace", "b"}}, 2),
      sample({{"pod", "x"}, {"container", "c"}}, 2)};  // no namespace: ignored
  const std::vector<prom::Sample> memory = {
      sample({{"pod", "a"}, {"container", "c"}, {"namespace", "z"}}, 1024),
      sample({{"pod", "a"}, {"container", "c"}, {"namespace", "b"}}, 2048),
      sample({{"pod", "x"}, {"container", "c"}}, 2048)};
  auto pods = assemblePodMetrics("", podSamples(cpu, "namespace"), podSamples(memory, "namespace"),
                                 std::chrono::minutes(5));
  EXPECT_EQ(describe(pods), "b/a:c=2/2Ki z/a:c=1/1Ki");
}

TEST(AssemblePodMetrics, TimestampIsTheEarliestSampleAndWindowTheRules) {
  const std::vector<prom::Sample> cpu = {sample({{"pod", "a"}, {"container", "c"}}, 1, 1000),
                                         sample({{"pod", "a"}, {"container", "d"}}, 1, 990)};
  const std::vector<prom::Sample> memory = {sample({{"pod", "a"}, {"container", "c"}}, 1, 995),
                                            sample({{"pod", "a"}, {"container", "d"}}, 1, 1000)};
  auto pods =
      assemblePodMetrics("ns", podSamples(cpu), podSamples(memory), std::chrono::minutes(3));
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].timestamp, prom::Timestamp(std::chrono::seconds(990)));
  EXPECT_EQ(pods[0].window, std::chrono::minutes(3));
}

TEST(AssembleNodeMetrics, OneUsagePerNode) {
  const double nan = std::nan("");
  const std::vector<prom::Sample> cpu = {
      sample({{"node", "n2"}}, 1.5, 1000), sample({{"node", "n1"}}, 0.5, 1000),
      sample({{"node", "n1"}}, 9, 1000),  // the first sample of a node wins
      sample({{"node", "n3"}}, 1), sample({{"node", "n4"}}, nan)};
  const std::vector<prom::Sample> memory = {sample({{"node", "n1"}}, 1048576, 990),
                                            sample({{"node", "n2"}}, 2147483648.0, 1000),
                                            sample({{"node", "n4"}}, 1024)};  // n3: no memory
  auto nodes = assembleNodeMetrics(UsageSamples{&cpu, "node", "", ""},
                                   UsageSamples{&memory, "node", "", ""}, std::chrono::minutes(5));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "n1");
  EXPECT_EQ(nodes[0].usage.cpu.toString(), "500m");
  EXPECT_EQ(nodes[0].usage.memory.toString(), "1Mi");
  EXPECT_EQ(nodes[0].timestamp, prom::Timestamp(std::chrono::seconds(990)));
  EXPECT_EQ(nodes[1].name, "n2");
  EXPECT_EQ(nodes[1].usage.cpu.toString(), "1500m");
  EXPECT_EQ(nodes[1].usage.memory.toString(), "2Gi");
}

}  // namespace resource_metrics_assembly_test
}  // namespace gpuscale::adapter
