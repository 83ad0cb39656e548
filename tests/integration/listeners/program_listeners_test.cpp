// Every program that serves plain HTTP, as a pod on the network can hold it: with silent
// connections and clients that send a byte every two seconds open on its listener, a probe on a
// new connection is still answered, and SIGTERM still ends the program within a grace period.
//   gpuscale-reconciler run   its probe listener (--health-bind-address), against an unreachable
//                             kube-apiserver (probes do not need one)
//   gpuscale-sim run          its health and metrics listener (--listen), against a stand-in
//                             kube-apiserver that accepts everything
//   gpuscale-sim exporter     its metrics listener
//   gpuscale-adapter          its plain /metrics listener and its HTTPS port
// Before, the reconciler's and the emulator's listener read each connection on one thread with a
// blocking socket whose timeout never fired: a silent connection held /healthz for every caller and
// SIGTERM waited for it forever.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/free_port.h"
#include "support/http_test_server.h"
#include "support/pod_rules.h"
#include "support/process.h"
#include "support/slow_clients.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace gpuscale::testing {
namespace program_listeners_test {

using namespace std::chrono_literals;

std::string binary(const std::string& name) {
  const char* dir = std::getenv("GPUSCALE_BINARY_DIR");
  return std::string(dir ? dir : ".") + "/bin/" + name;
}

std::string sourceFile(const std::string& path) {
  const char* dir = std::getenv("GPUSCALE_SOURCE_DIR");
  return std::string(dir ? dir : "..") + "/" + path;
}

// The HTTP code curl got for `url` (0: no answer within `seconds`).
int httpCode(const std::string& url, int seconds = 30) {
  const auto result = runProcess(
      {"curl", "-sk", "-o", "/dev/null", "-m", std::to_string(seconds), "-w", "%{http_code}", url});
  return result.out.empty() ? 0 : std::atoi(result.out.c_str());
}

// A kube-apiserver stand-in that accepts everything: lists are empty, writes are echoed, watches
// stay open until the stub stops. Enough for the programs to start and serve their probes.
gpuscale::test::HttpTestResponse acceptingApi(const gpuscale::test::HttpTestRequest& request) {
  gpuscale::test::HttpTestResponse r;
  if (request.method == "GET" && request.query.find("watch=true") != std::string::npos) {
    r.delay = 300s;
    r.body = "";
  } else if (request.method == "GET") {
    r.body = R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]})";
  } else {
    r.status = request.method == "POST" ? 201 : 200;
    r.body = request.body.empty() ? "{}" : request.body;
  }
  return r;
}

// A kubeconfig for `server` (the programs' probes answer whether it works or not).
std::string kubeconfig(const TempDir& dir, const std::string& server) {
  const std::string path = dir.file("kubeconfig");
  std::ofstream(path) << R"(apiVersion: v1
kind: Config
clusters:
- name: none
  cluster: {server: ")" + server +
                             R"(", insecure-skip-tls-verify: true}
users:
- name: none
  user: {token: x}
contexts:
- name: none
  context: {cluster: none, user: none}
current-context: none
)";
  return path;
}

struct Program {
  std::string name;
  std::unique_ptr<BackgroundProcess> process;
  uint16_t port = 0;     // the listener held by the clients
  std::string probeUrl;  // answered 200 while they hold it
};

class ProgramListenersTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!programAvailable("curl")) GTEST_SKIP() << "curl not installed";
  }

  // Starts the program under test; its listener port is free before it binds.
  Program start(const std::string& which) {
    Program p;
    p.name = which;
    const std::string log = dir_.file(which + ".log");
    if (which == "reconciler") {
      p.port = freeLoopbackPort();
      p.process = std::make_unique<BackgroundProcess>(
          std::vector<std::string>{binary("gpuscale-reconciler"), "run", "--kubeconfig",
                                   kubeconfig(dir_, "https://127.0.0.1:1"), "--dry-run",
                                   "--leader-elect=false", "--secure-status-bind-address=",
                                   "--health-bind-address=127.0.0.1:" + std::to_string(p.port)},
          log);
      p.probeUrl = "http://127.0.0.1:" + std::to_string(p.port) + "/healthz";
    } else if (which == "sim_run" || which == "sim_exporter") {
      std::vector<std::string> argv{binary("gpuscale-sim")};
      if (which == "sim_run") {
        argv.insert(argv.end(), {"run", "--scenario", sourceFile("tests/e2e/sim/scenario.yaml"),
                                 "--kubeconfig", kubeconfig(dir_, api_.url())});
      } else {
        argv.push_back("exporter");
      }
      argv.insert(argv.end(), {"--listen", "127.0.0.1:0", "--port-file", dir_.file("port")});
      p.process = std::make_unique<BackgroundProcess>(argv, log);
      EXPECT_TRUE(waitUntil([&] { return std::ifstream(dir_.file("port")).peek() != EOF; }, 30s));
      std::ifstream(dir_.file("port")) >> p.port;
      p.probeUrl = "http://127.0.0.1:" + std::to_string(p.port) +
                   (which == "sim_run" ? "/healthz" : "/metrics");
    } else {  // the adapter's plain listener or its HTTPS port
      std::ofstream(dir_.file("rules.yaml")) << podSumRules("m");
      const uint16_t secure = freeLoopbackPort();
      const uint16_t plain = freeLoopbackPort();
      p.process = std::make_unique<BackgroundProcess>(
          std::vector<std::string>{
              binary("gpuscale-adapter"), "--config", dir_.file("rules.yaml"), "--standalone",
              "--prometheus-url", prometheus_.url(), "--bind-address=127.0.0.1",
              "--secure-port=" + std::to_string(secure), "--cert-dir", dir_.file("certs"),
              "--metrics-bind-address=127.0.0.1:" + std::to_string(plain)},
          log);
      const bool tls = which == "adapter_https";
      p.port = tls ? secure : plain;
      p.probeUrl = tls ? "https://127.0.0.1:" + std::to_string(secure) + "/healthz"
                       : "http://127.0.0.1:" + std::to_string(plain) + "/metrics";
    }
    EXPECT_TRUE(waitUntil([&] { return httpCode(p.probeUrl, 5) == 200; }, 60s))
        << which << " did not start:\n"
        << p.process->log();
    return p;
  }

  TempDir dir_;
  gpuscale::test::HttpTestServer api_{
      gpuscale::test::HttpTestServer::ResponseHandler(acceptingApi)};
  gpuscale::test::HttpTestServer prometheus_{
      gpuscale::test::HttpTestServer::ResponseHandler([](const gpuscale::test::HttpTestRequest& r) {
        if (auto discovery = podMetricDiscovery(r)) return *discovery;
        gpuscale::test::HttpTestResponse none;
        none.status = 404;
        return none;
      })};
};

TEST_P(ProgramListenersTest, HeldConnectionsHoldNeitherProbesNorShutdown) {
  Program program = start(GetParam());
  ASSERT_TRUE(program.process->running()) << program.process->log();
  {
    SlowClients held(program.port, 8, 4, 2s);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(httpCode(program.probeUrl), 200) << program.name << "\n" << program.process->log();
    }
    // SIGTERM with all of them open: the program ends (Kubernetes' default grace is 30 s).
    program.process->signal(SIGTERM);
    const auto exited = program.process->wait(30s);
    ASSERT_TRUE(exited.has_value()) << program.name << " did not end on SIGTERM\n"
                                    << program.process->log();
    EXPECT_EQ(*exited, 0) << program.process->log();
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, ProgramListenersTest,
                         ::testing::Values("reconciler", "sim_run", "sim_exporter", "adapter_plain",
                                           "adapter_https"));

}  // namespace program_listeners_test
}  // namespace gpuscale::testing
