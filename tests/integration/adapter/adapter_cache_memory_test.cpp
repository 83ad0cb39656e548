// --metrics-cache-max-bytes bounds what the adapter process holds, not only what the cache counts:
// a real Prometheus scraping 2,000 series, the real gpuscale-adapter serving an external rule that
// returns all of them, and a burst of 300 distinct label selectors (300 distinct PromQL texts,
// each answer 2,000 samples: several times the cache's limit passes through it). Checked on the
// adapter's resident set (VmRSS), no timing:
//  - after the burst it has grown by at most 1.25x the cache limit;
//  - once the entries' TTL has passed (with no request coming), the memory has gone back to the
//    system: the resident set is within a quarter of the limit of where it started.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "adapter_process.h"
#include "support/exporter_server.h"
#include "support/tls_client.h"

namespace gpuscale::adapter::testing {
namespace adapter_cache_memory_test {

using namespace std::chrono_literals;

constexpr int kSeries = 2000;
constexpr int kQueries = 300;
constexpr long kCacheLimit = 64L << 20;
constexpr int kTtlSeconds = 15;

constexpr char kRules[] = R"(
externalRules:
- seriesQuery: 'cache_load{namespace!=""}'
  resources: {namespaced: false}
  name: {matches: "^cache_load$", as: "cache_load"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (pod, namespace)'
)";

long residentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return -1;
}

std::string target(int i) {
  // `burst!="qN"` matches every series and makes each PromQL text distinct.
  return "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/"
         "cache_load?labelSelector=burst!%3Dq" +
         std::to_string(i);
}

// Sends targets [first, last) over `clients` keep-alive TLS connections; the number answered 200
// with every sample. A target not answered so (shed or late on a loaded machine) is sent again,
// up to kAttempts times: what the test measures is the heap once every answer was cached.
constexpr int kAttempts = 8;

int sendAll(uint16_t port, int first, int last, int clients) {
  std::atomic<int> next{first};
  std::atomic<int> full{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      std::unique_ptr<gpuscale::testing::TlsClient> connection;
      for (int i = next++; i < last; i = next++) {
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
          try {
            if (!connection) connection = std::make_unique<gpuscale::testing::TlsClient>(port);
            auto reply = connection->get(target(i));
            const std::string sample = R"("metricName":"cache_load")";
            size_t items = 0;
            for (size_t at = 0; reply && (at = reply->body.find(sample, at)) != std::string::npos;
                 at += sample.size()) {
              ++items;
            }
            if (!reply || reply->closeRequested) connection.reset();
            if (reply && reply->status == 200 && items == kSeries) {
              ++full;
              break;
            }
          } catch (const std::exception&) {
            connection.reset();
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return full.load();
}

TEST(AdapterCacheMemory, ResidentSetFollowsTheCacheLimitAndFallsWhenEntriesExpire) {
  if (!gpuscale::test::PrometheusServer::available()) GTEST_SKIP() << "prometheus not installed";
  gpuscale::test::ExporterServer exporter;
  for (int i = 0; i < kSeries; ++i) {
    exporter.set("cache_load", {{"namespace", "default"}, {"pod", "pod-" + std::to_string(i)}},
                 i % 97);
  }
  gpuscale::test::PrometheusServerOptions options;
  options.scrapeTargets = {exporter.target()};
  auto prometheus = gpuscale::test::PrometheusServer::start(options);
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().toString();
  gpuscale::testing::TempDir dir;
  writeFile(dir.file("rules.yaml"), kRules);
  AdapterProcess adapter(dir.file("rules.yaml"), (*prometheus)->url(),
                         {"--metrics-cache-ttl=" + std::to_string(kTtlSeconds) + "s",
                          "--metrics-cache-max-bytes=" + std::to_string(kCacheLimit)});
  ASSERT_TRUE(adapter.running()) << adapter.log();
  const std::string url = adapter.url("");
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));

  // Warm-up: Prometheus has every series, and the adapter's code paths, threads and TLS sessions
  // have run once; their entries expire before the baseline is taken.
  ASSERT_TRUE(gpuscale::testing::waitUntil([&] { return sendAll(port, -1, 0, 1) == 1; }, 60s))
      << adapter.log();
  EXPECT_EQ(sendAll(port, -20, -1, 4), 19) << adapter.log();
  std::this_thread::sleep_for(std::chrono::seconds(kTtlSeconds + 4));
  const long start = residentBytes(adapter.pid());

  EXPECT_EQ(sendAll(port, 0, kQueries, 4), kQueries) << adapter.log();
  std::this_thread::sleep_for(3s);  // trims run at most once a second
  const long afterBurst = residentBytes(adapter.pid());
  std::this_thread::sleep_for(std::chrono::seconds(kTtlSeconds + 4));
  const long afterExpiry = residentBytes(adapter.pid());
  const auto mib = [](long bytes) { return std::to_string(bytes >> 20) + " MiB"; };
  std::cout << "resident: start " << mib(start) << ", after the burst " << mib(afterBurst)
            << ", after the TTL " << mib(afterExpiry) << " (cache limit " << mib(kCacheLimit)
            << ")\n";

  EXPECT_LE(afterBurst - start, kCacheLimit + kCacheLimit / 4)
      << "start " << start << ", after the burst " << afterBurst;
  EXPECT_LE(afterExpiry - start, kCacheLimit / 4)
      << "start " << start << ", after the TTL " << afterExpiry;
  const auto metrics = curl(adapter.url("/metrics")).body;
  EXPECT_GT(sumOf(metrics, "gpuscale_adapter_query_cache_dropped_total", {R"(reason="size")"}), 0)
      << "the burst never filled the cache";
}

}  // namespace adapter_cache_memory_test
}  // namespace gpuscale::adapter::testing
