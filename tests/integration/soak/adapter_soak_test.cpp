// gpuscale-adapter under a steady mixed load for a while, against a Prometheus that is slow, fails,
// answers garbage or hangs up on a share of the queries, with clients that send distinct selectors
// (cache churn), malformed paths, garbage and connections they leave idle. What must hold: the
// resident set stops growing once warmed up, health probes are answered throughout, the heap does
// not grow per request, and the program shuts down cleanly (in the sanitizer build that includes
// LeakSanitizer's check at exit, which catches any lost allocation, however small).
//
// Per-request growth: memory a request leaves behind while still referenced (a map that keeps an
// entry per request, say) is invisible to LeakSanitizer and, at a few hundred bytes, to the
// resident set. So the load runs in two phases, a warm-up and a measured one, each followed by a
// quiet moment (no connection open, the cache's entries expired); the heap in live allocations
// (gpuscale_heap_in_use_bytes: exact under ASan, mallinfo2 with glibc's thread caches off
// otherwise) at the two quiet moments,
// divided by the requests answered between them, must stay under kLeakBytesPerRequest. With about
// 10,000 measured requests, a leak of 100 bytes per request is 1 MB of growth; a quiet adapter's
// heap moves by tens of kilobytes.
//
// GPUSCALE_SOAK_SECONDS sets the length (default 45) and GPUSCALE_SOAK_RATE the requests per
// second (default 250); docs/operations.md gives the long run. The resident-set samples are
// printed, and written to GPUSCALE_SOAK_REPORT when it names a file.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

#include "adapter_process.h"
#include "support/free_port.h"
#include "support/http_test_server.h"
#include "support/pod_rules.h"
#include "support/tls_client.h"

namespace gpuscale::adapter::testing {
namespace adapter_soak_test {

using namespace std::chrono_literals;

// Every twentieth query of each kind of fault, the rest answered after a short, varying delay.
HttpTestResponse faultyPrometheus(const HttpTestRequest& request, std::atomic<uint64_t>& queries) {
  if (auto discovery = gpuscale::testing::podMetricDiscovery(request)) return *discovery;
  HttpTestResponse r;
  if (request.path != "/api/v1/query") {
    r.status = 404;
    return r;
  }
  const uint64_t n = queries++;
  switch (n % 20) {
    case 0:
      r.status = 503;
      r.body = R"({"status":"error","errorType":"unavailable","error":"overloaded"})";
      return r;
    case 1:
      r.delay = 1500ms;  // past the adapter's --prometheus-timeout
      break;
    case 2:
      r.body = R"({"status":"success","data":{"resultType":"vector","result":[{"metric":)";
      return r;
    case 3:
      r.close = true;
      return r;
    default:
      r.delay = std::chrono::milliseconds(10 * (n % 7));
  }
  std::string result;
  for (int i = 0; i < 3; ++i) {
    if (!result.empty()) result += ",";
    result += R"({"metric":{"namespace":"default","pod":"p)" + std::to_string((n + i) % 100) +
              R"("},"value":[1714557600,"1.5"]})";
  }
  r.body = R"({"status":"success","data":{"resultType":"vector","result":[)" + result + "]}}";
  return r;
}

// The i-th request of the mix: a named object with a new name (a new cache entry), a wildcard with
// a new selector, a malformed path, and discovery.
std::string requestTarget(uint64_t i) {
  const std::string n = std::to_string(i);
  switch (i % 4) {
    case 0:
      return "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns" + std::to_string(i % 97) +
             "/pods/p" + n + "/m";
    case 1:
      return "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/"
             "m?labelSelector=app%3Dv" +
             n;
    case 2:
      return "/apis/custom.metrics.k8s.io/v1beta1/namespaces/%ZZ/pods/" +
             std::string(i % 512, 'x') + "/m?labelSelector=%";
    default:
      return "/apis/custom.metrics.k8s.io/v1beta1";
  }
}

long residentKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// Growth of the live heap per answered request above which the test fails.
constexpr double kLeakBytesPerRequest = 100;

int envInt(const char* name, int fallback, int minimum) {
  const char* text = std::getenv(name);
  return std::max(text ? std::atoi(text) : fallback, minimum);
}

// gpuscale_heap_in_use_bytes from the plain /metrics listener; -1 when unreadable.
double heapInUse(const std::string& metricsAddress) {
  const std::string name = "gpuscale_heap_in_use_bytes ";
  std::istringstream lines(curl("http://" + metricsAddress + "/metrics").body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name, 0) == 0) return std::strtod(line.c_str() + name.size(), nullptr);
  }
  return -1;
}

class LoadClients {
 public:
  LoadClients(uint16_t port, int clients, int requestsPerSecond) {
    const auto period = std::chrono::microseconds(1'000'000LL * clients / requestsPerSecond);
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, port, c, clients, period] { drive(port, c, clients, period); });
    }
    threads_.emplace_back([this, port] { churnConnections(port); });
  }
  ~LoadClients() { stop(); }

  void stop() {
    stopping_ = true;
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  uint64_t answered() const { return answered_; }
  uint64_t connectFailures() const { return connectFailures_; }

 private:
  void drive(uint16_t port, int client, int clients, std::chrono::microseconds period) {
    std::unique_ptr<TlsClient> connection;
    auto next = std::chrono::steady_clock::now();
    for (uint64_t i = client; !stopping_; i += clients) {
      try {
        if (!connection) connection = std::make_unique<TlsClient>(port);
        auto reply = connection->get(requestTarget(i));
        if (reply) ++answered_;
        if (!reply || reply->closeRequested) connection.reset();
      } catch (const std::exception&) {
        ++connectFailures_;
        connection.reset();
      }
      next += period;
      std::this_thread::sleep_until(next);
    }
  }

  // Connections opened and left idle (half a request, or garbage), thirty at a time.
  void churnConnections(uint16_t port) {
    std::deque<std::unique_ptr<TlsClient>> idle;
    for (uint64_t i = 0; !stopping_; ++i) {
      try {
        auto connection = std::make_unique<TlsClient>(port);
        if (i % 3 == 0) (void)connection->send("GET /apis HTTP/1.1\r\nHost: x\r\n");
        if (i % 3 == 1) (void)connection->send(std::string("\x16\x03\x01\xff\xff garbage\r\n\r\n"));
        idle.push_back(std::move(connection));
      } catch (const std::exception&) {
        ++connectFailures_;
      }
      if (idle.size() > 30) idle.pop_front();
      std::this_thread::sleep_for(100ms);
    }
  }

  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> answered_{0};
  std::atomic<uint64_t> connectFailures_{0};
  std::vector<std::thread> threads_;
};

TEST(AdapterSoak, ResidentSetStaysFlatUnderFaultsAndChurn) {
  std::atomic<uint64_t> queries{0};
  HttpTestServer prometheus(
      [&queries](const HttpTestRequest& request) { return faultyPrometheus(request, queries); });
  gpuscale::testing::TempDir dir;
  writeFile(dir.file("rules.yaml"), gpuscale::testing::podSumRules("m"));
  // glibc's per-thread caches (tcache) hold freed chunks as "in use", up to a few hundred KB per
  // thread, filled slowly by new sizes: without them mallinfo2's count is the live heap. (The
  // sanitizer build counts live allocations exactly whatever this says.)
  setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
  const std::string metricsAddress =
      "127.0.0.1:" + std::to_string(gpuscale::testing::freeLoopbackPort());
  AdapterProcess adapter(
      dir.file("rules.yaml"), prometheus.url(),
      {"--prometheus-timeout=1s", "--metrics-cache-ttl=2s", "--metrics-cache-max-bytes=4194304",
       "--request-timeout=5s", "--max-requests-inflight=40", "--max-connections=200",
       "--metrics-bind-address=" + metricsAddress});
  ASSERT_TRUE(adapter.running()) << adapter.log();
  const std::string url = adapter.url("");
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));

  const int seconds = envInt("GPUSCALE_SOAK_SECONDS", 45, 15);
  const int rate = envInt("GPUSCALE_SOAK_RATE", 250, 10);
  std::vector<long> samples;
  int healthFailures = 0;
  uint64_t answered = 0;
  // A quiet moment: no connection open, the cache's entries expired (TTL 2 s, swept every second).
  const auto quiet = [&] {
    std::this_thread::sleep_for(4s);
    return heapInUse(metricsAddress);
  };
  // One phase of load for `phaseSeconds`, sampling the resident set every second.
  const auto load = [&](int phaseSeconds) {
    LoadClients clients(port, 8, rate);
    const auto start = std::chrono::steady_clock::now();
    for (int s = 1; s <= phaseSeconds; ++s) {
      std::this_thread::sleep_until(start + std::chrono::seconds(s));
      samples.push_back(residentKiB(adapter.pid()));
      if (samples.size() % 5 == 0 && curl(adapter.url("/healthz"), 10).code != 200) {
        ++healthFailures;
      }
    }
    clients.stop();
    answered += clients.answered();
    return clients.answered();
  };
  const int warmUp = std::max(5, seconds / 4);
  load(warmUp);
  const double heapBefore = quiet();
  const uint64_t measured = load(seconds - warmUp);
  const double heapAfter = quiet();
  std::cout << "answered " << answered << " requests, " << queries.load()
            << " Prometheus queries; heap in use at the quiet moments " << heapBefore << " and "
            << heapAfter << " bytes around " << measured
            << " requests: " << (heapAfter - heapBefore) / std::max<uint64_t>(measured, 1)
            << " bytes per request\n";
  EXPECT_GT(measured, 0u);
  ASSERT_GT(heapBefore, 0) << "no gpuscale_heap_in_use_bytes on " << metricsAddress;
  EXPECT_LE((heapAfter - heapBefore) / std::max<uint64_t>(measured, 1), kLeakBytesPerRequest)
      << "the heap grew by " << heapAfter - heapBefore << " bytes over " << measured
      << " requests\n"
      << adapter.log();

  std::string series;
  for (long kib : samples) series += std::to_string(kib) + " ";
  std::cout << "resident KiB per second: " << series << "\n";
  if (const char* report = std::getenv("GPUSCALE_SOAK_REPORT")) std::ofstream(report) << series;

  // Warm-up is the first third; the peak of the last third must not exceed the peak of the middle
  // third by more than 10 % + 8 MiB (an allocator's noise, not a leak's slope).
  const size_t third = samples.size() / 3;
  const long middlePeak = *std::max_element(samples.begin() + third, samples.begin() + 2 * third);
  const long lastPeak = *std::max_element(samples.begin() + 2 * third, samples.end());
  EXPECT_LE(lastPeak, middlePeak + middlePeak / 10 + 8 * 1024) << series << "\n" << adapter.log();
  EXPECT_EQ(healthFailures, 0) << adapter.log();
  EXPECT_EQ(curl(adapter.url("/healthz")).code, 200) << adapter.log();
  const auto exitCode = adapter.stop();
  ASSERT_TRUE(exitCode.has_value()) << "did not stop on SIGTERM:\n" << adapter.log();
  EXPECT_EQ(*exitCode, 0) << adapter.log();
}

}  // namespace adapter_soak_test
}  // namespace gpuscale::adapter::testing
