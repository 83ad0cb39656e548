// Integration-test helpers for the adapter: start the real gpuscale-adapter (and the simulator's
// exporter, and the Debian prometheus) as processes on free loopback ports, and ask them with the
// real clients (kubectl get --raw, curl).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/backend.h"
#include "support/exporter_server.h"
#include "support/free_port.h"
#include "support/http_test_server.h"
#include "support/process.h"
#include "support/prometheus_server.h"
#include "support/temp_dir.h"
#include "support/thanos.h"
#include "support/tls_client.h"
#include "support/triton_rules.h"
#include "support/wait_until.h"

namespace gpuscale::adapter::testing {

using gpuscale::testing::BackgroundProcess;
using gpuscale::testing::ProcessResult;
using gpuscale::testing::runProcess;
// The fake backends (Prometheus, kube-apiserver) and the raw TLS client the tests talk through.
using gpuscale::test::HttpTestRequest;
using gpuscale::test::HttpTestResponse;
using gpuscale::test::HttpTestServer;
using gpuscale::testing::TlsClient;

inline std::string binary(const std::string& name) {
  const char* dir = std::getenv("GPUSCALE_BINARY_DIR");
  return std::string(dir ? dir : ".") + "/bin/" + name;
}

inline void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The flags of an adapter in delegated mode against a fake kube-apiserver at `kubeUrl`: one
// kubeconfig (written to `path`, token "adapter") for authentication, authorization and listing,
// and no lookup of the authentication ConfigMap.
inline std::vector<std::string> delegationFlags(const std::string& path,
                                                const std::string& kubeUrl) {
  writeFile(path,
            "apiVersion: v1\nkind: Config\n"
            "clusters: [{name: c, cluster: {server: \"" +
                kubeUrl +
                "\"}}]\n"
                "users: [{name: u, user: {token: adapter}}]\n"
                "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
                "current-context: c\n");
  return {"--authentication-kubeconfig", path, "--authorization-kubeconfig",  path,
          "--lister-kubeconfig",         path, "--authentication-skip-lookup"};
}

struct HttpReply {
  int code = 0;
  std::string body;
};

// curl -k: the second client (and the one that shows status codes and exact bodies). Its user agent
// is not curl's, which would make the server pretty-print as Kubernetes does for curl. The whole
// exchange is limited to `maxSeconds`.
inline HttpReply curl(const std::string& url, int maxSeconds = 20) {
  ProcessResult r = runProcess({"curl", "-sk", "-m", std::to_string(maxSeconds), "-A",
                                "gpuscale-integration-test", "-w", "%{http_code}", url});
  HttpReply reply;
  if (r.out.size() >= 3) {
    reply.code = std::atoi(r.out.substr(r.out.size() - 3).c_str());
    reply.body = r.out.substr(0, r.out.size() - 3);
  }
  return reply;
}

// Timestamps change between calls; everything else is compared byte for byte.
inline std::string withoutTimestamps(const std::string& body) {
  static const std::regex kTimestamp(R"("timestamp":"[0-9T:Z-]+")");
  return std::regex_replace(body, kTimestamp, R"("timestamp":"T")");
}

// The sum of the samples in the Prometheus text `exposition` whose name is `name` and whose
// labels include every `name="value"` pair of `labels` (0 when there is none).
inline double sumOf(const std::string& exposition, const std::string& name,
                    const std::vector<std::string>& labels) {
  double sum = 0;
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name + "{", 0) != 0) continue;
    auto close = line.rfind('}');
    if (close == std::string::npos) continue;
    std::string set = line.substr(name.size(), close + 1 - name.size());
    bool all = true;
    for (const auto& label : labels) all = all && set.find(label) != std::string::npos;
    if (all) sum += std::strtod(line.c_str() + close + 1, nullptr);
  }
  return sum;
}

// The adapter's calls to Prometheus at `endpoint` ("query", "series", "label_values", "labels") in
// its /metrics text, those with `result` only when given ("success", "body too large", ...).
inline double adapterCalls(const std::string& metrics, const std::string& endpoint,
                           const std::string& result = "") {
  std::vector<std::string> labels{R"(endpoint=")" + endpoint + R"(")"};
  if (!result.empty()) labels.push_back(R"(result=")" + result + R"(")");
  return sumOf(metrics, "gpuscale_adapter_prometheus_requests_total", labels);
}

// The simulator's exporter (Triton's demo pods; `extraArgs` such as {"--server", "vllm"} pick
// another) on a free loopback port; `target` becomes "127.0.0.1:<port>" (empty when it did not
// start).
inline std::unique_ptr<BackgroundProcess> startExporter(
    const gpuscale::testing::TempDir& dir, std::string& target,
    const std::vector<std::string>& extraArgs = {}) {
  std::vector<std::string> argv = {
      binary("gpuscale-sim"), "exporter",    "--listen",
      "127.0.0.1:0",          "--port-file", dir.file("exporter.port")};
  argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
  auto exporter = std::make_unique<BackgroundProcess>(argv, dir.file("exporter.log"));
  if (gpuscale::testing::waitUntil([&] { return std::ifstream(dir.file("exporter.port")).good(); },
                                   std::chrono::seconds(10))) {
    std::string port;
    std::ifstream(dir.file("exporter.port")) >> port;
    if (!port.empty()) target = "127.0.0.1:" + port;
  }
  return exporter;
}

// The adapter program, in standalone mode unless `standalone` is false (then the extra arguments
// give the delegation flags; it binds to 127.0.0.1 either way).
class AdapterProcess {
 public:
  AdapterProcess(const std::string& config, const std::string& prometheusUrl,
                 std::vector<std::string> extraArgs = {}, bool standalone = true) {
    port_ = gpuscale::testing::freeLoopbackPort();
    std::vector<std::string> argv = {binary("gpuscale-adapter"),
                                     "--config",
                                     config,
                                     standalone ? "--standalone" : "--bind-address=127.0.0.1",
                                     "--prometheus-url",
                                     prometheusUrl,
                                     "--secure-port",
                                     std::to_string(port_),
                                     "--cert-dir",
                                     dir_.file("certs"),
                                     "--metrics-relist-interval",
                                     "1s"};
    // Discovery as an operator would set it up for the backend under test.
    if (gpuscale::test::backendUnderTest() != gpuscale::test::Backend::kPrometheus) {
      argv.push_back("--discovery-backend=" +
                     std::string(gpuscale::test::backendName(gpuscale::test::backendUnderTest())));
    }
    if (gpuscale::test::thanosUnderTest()) {
      argv.push_back(std::string("--thanos-replica-label=") + gpuscale::test::kThanosReplicaLabel);
    }
    argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
    process_ = std::make_unique<BackgroundProcess>(argv, dir_.file("adapter.log"));
    bool up = gpuscale::testing::waitUntil([&] { return curl(url("/healthz")).code == 200; },
                                           std::chrono::seconds(30));
    EXPECT_TRUE(up) << "the adapter did not start:\n" << log();
  }
  ~AdapterProcess() { stop(); }

  uint16_t port() const { return port_; }
  std::string url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(port_) + path;
  }
  // kubectl --kubeconfig=/dev/null --server ... --insecure-skip-tls-verify --token=TOKEN get --raw
  // PATH
  ProcessResult kubectl(const std::string& path, const std::string& token = "x") const {
    return runProcess({"kubectl", "--kubeconfig=/dev/null", "--server",
                       "https://127.0.0.1:" + std::to_string(port_), "--insecure-skip-tls-verify",
                       "--token=" + token, "get", "--raw", path});
  }
  bool running() { return process_ && process_->running(); }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  void signal(int signo) {
    if (process_) process_->signal(signo);
  }
  // The log so far (after stop(), the whole log of the stopped process).
  std::string log() const { return process_ ? process_->log() : stoppedLog_; }
  // SIGTERM; the exit code (nullopt when it did not exit in time).
  std::optional<int> stop() {
    if (!process_) return std::nullopt;
    process_->signal(SIGTERM);
    auto code = process_->wait(std::chrono::seconds(20));
    stoppedLog_ = process_->log();
    process_.reset();
    return code;
  }

 private:
  gpuscale::testing::TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
  std::string stoppedLog_;
};

// What a suite against a real Prometheus shares: the exporter (Triton's demo pods unless
// `exporterArgs` pick another server), Prometheus scraping it, and the adapter serving `rules`,
// started once and stopped in reverse order.
struct TritonStack {
  // Null when prometheus or kubectl is not installed. Fails the calling test (and returns what was
  // started) when a part does not come up or `readyPath` does not answer 200 within a minute.
  static std::unique_ptr<TritonStack> start(const std::string& rules,
                                            const std::vector<std::string>& adapterArgs,
                                            const std::string& readyPath,
                                            const std::vector<std::string>& exporterArgs = {}) {
    if (!gpuscale::test::PrometheusServer::available() ||
        !gpuscale::testing::programAvailable("kubectl")) {
      return nullptr;
    }
    auto stack = std::make_unique<TritonStack>();
    std::string target;
    stack->exporter = startExporter(stack->dir, target, exporterArgs);
    EXPECT_FALSE(target.empty()) << "the exporter did not start";
    if (target.empty()) return stack;
    gpuscale::test::PrometheusServerOptions options;
    options.scrapeTargets = {target};
    auto prometheus = gpuscale::test::PrometheusServer::start(options);
    EXPECT_TRUE(prometheus.ok()) << prometheus.status().toString();
    if (!prometheus.ok()) return stack;
    stack->prometheus = std::move(*prometheus);
    writeFile(stack->dir.file("rules.yaml"), rules);
    stack->adapter = std::make_unique<AdapterProcess>(
        stack->dir.file("rules.yaml"), gpuscale::test::adapterUrl(stack->prometheus->url()),
        adapterArgs);
    AdapterProcess& adapter = *stack->adapter;
    // Discovery, then two scrapes' worth of data for the delta()/rate() windows.
    EXPECT_TRUE(gpuscale::testing::waitUntil(
        [&] { return curl(adapter.url(readyPath)).code == 200; }, std::chrono::seconds(60)))
        << adapter.log();
    return stack;
  }

  gpuscale::testing::TempDir dir;
  std::unique_ptr<BackgroundProcess> exporter;
  std::unique_ptr<gpuscale::test::PrometheusServer> prometheus;
  std::unique_ptr<AdapterProcess> adapter;
};

// What a suite that sets its own series opens with: a folder for its files, an in-process exporter
// and a real Prometheus scraping it, stopped in reverse order.
struct ScrapedExporter {
  // Null when prometheus or kubectl is not installed. `seed` sets the first series, before the
  // first scrape. Fails the calling test (and returns what was started, without Prometheus) when
  // Prometheus does not start.
  static std::unique_ptr<ScrapedExporter> open(
      const std::function<void(gpuscale::test::ExporterServer&)>& seed) {
    if (!gpuscale::test::PrometheusServer::available() ||
        !gpuscale::testing::programAvailable("kubectl")) {
      return nullptr;
    }
    auto opened = std::make_unique<ScrapedExporter>();
    seed(opened->exporter);
    gpuscale::test::PrometheusServerOptions options;
    options.scrapeTargets = {opened->exporter.target()};
    auto prometheus = gpuscale::test::PrometheusServer::start(options);
    EXPECT_TRUE(prometheus.ok()) << prometheus.status().toString();
    if (prometheus.ok()) opened->prometheus = std::move(*prometheus);
    return opened;
  }

  gpuscale::testing::TempDir dir;
  gpuscale::test::ExporterServer exporter;
  std::unique_ptr<gpuscale::test::PrometheusServer> prometheus;
};

// A test suite whose tests share one TritonStack. `Suite` is the derived fixture (so each suite has
// its own stack); its SetUpTestSuite calls startStack. Tests skip when a real part is not
// installed. Not thread-safe: GoogleTest runs a suite's set-up, tests and tear-down on one thread.
template <typename Suite>
class TritonStackSuite : public ::testing::Test {
 protected:
  static void startStack(const std::string& rules, const std::vector<std::string>& adapterArgs,
                         const std::string& readyPath,
                         const std::vector<std::string>& exporterArgs = {}) {
    stack_ = TritonStack::start(rules, adapterArgs, readyPath, exporterArgs).release();
    if (stack_ != nullptr && stack_->adapter) {
      adapter_ = stack_->adapter.get();
      prometheus_ = stack_->prometheus.get();
    }
  }
  static void TearDownTestSuite() {
    delete stack_;
    stack_ = nullptr;
    adapter_ = nullptr;
    prometheus_ = nullptr;
  }
  void SetUp() override {
    if (adapter_ == nullptr) GTEST_SKIP() << "prometheus or kubectl not installed";
  }

  inline static TritonStack* stack_ = nullptr;
  inline static gpuscale::test::PrometheusServer* prometheus_ = nullptr;
  inline static AdapterProcess* adapter_ = nullptr;
};

// The body curl receives for `path` (timestamps masked), after checking its HTTP code and, for a
// 200, that kubectl get --raw prints the same body.
inline std::string kubectlAndCurl(const AdapterProcess& adapter, const std::string& path,
                                  int code = 200) {
  ProcessResult k = adapter.kubectl(path);
  HttpReply c = curl(adapter.url(path));
  EXPECT_EQ(c.code, code) << path << "\n" << c.body;
  if (code == 200) {
    EXPECT_EQ(k.exitCode, 0) << k.err;
    EXPECT_EQ(withoutTimestamps(k.out), withoutTimestamps(c.body)) << path;
  }
  return withoutTimestamps(c.body);
}

}  // namespace gpuscale::adapter::testing
