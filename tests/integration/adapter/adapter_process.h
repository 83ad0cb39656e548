// Integration-test helpers for the adapter: start the real gpuscale-adapter (and the simulator's
// exporter, and the Debian prometheus) as processes on free loopback ports, and ask them with the
// real clients (kubectl get --raw, curl).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "support/free_port.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace gpuscale::adapter::testing {

using gpuscale::testing::BackgroundProcess;
using gpuscale::testing::ProcessResult;
using gpuscale::testing::runProcess;

inline std::string binary(const std::string& name) {
  const char* dir = std::getenv("GPUSCALE_BINARY_DIR");
  return std::string(dir ? dir : ".") + "/bin/" + name;
}

inline void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

struct HttpReply {
  int code = 0;
  std::string body;
};

// curl -k: the second client (and the one that shows status codes and exact bodies). Its user agent
// is not curl's, which would make the server pretty-print as Kubernetes does for curl.
inline HttpReply curl(const std::string& url) {
  ProcessResult r = runProcess(
      {"curl", "-sk", "-m", "20", "-A", "gpuscale-integration-test", "-w", "%{http_code}", url});
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

// The adapter program in standalone mode.
class AdapterProcess {
 public:
  AdapterProcess(const std::string& config, const std::string& prometheusUrl,
                 std::vector<std::string> extraArgs = {}) {
    port_ = gpuscale::testing::freeLoopbackPort();
    std::vector<std::string> argv = {binary("gpuscale-adapter"),
                                     "--config",
                                     config,
                                     "--standalone",
                                     "--prometheus-url",
                                     prometheusUrl,
                                     "--secure-port",
                                     std::to_string(port_),
                                     "--cert-dir",
                                     dir_.file("certs"),
                                     "--metrics-relist-interval",
                                     "1s"};
    argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
    process_ = std::make_unique<BackgroundProcess>(argv, dir_.file("adapter.log"));
    bool up = gpuscale::testing::waitUntil([&] { return curl(url("/healthz")).code == 200; },
                                           std::chrono::seconds(30));
    EXPECT_TRUE(up) << "the adapter did not start:\n" << log();
  }
  ~AdapterProcess() { stop(); }

  std::string url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(port_) + path;
  }
  // kubectl --kubeconfig=/dev/null --server ... --insecure-skip-tls-verify --token=x get --raw PATH
  ProcessResult kubectl(const std::string& path) const {
    return runProcess({"kubectl", "--kubeconfig=/dev/null", "--server",
                       "https://127.0.0.1:" + std::to_string(port_), "--insecure-skip-tls-verify",
                       "--token=x", "get", "--raw", path});
  }
  bool running() { return process_ && process_->running(); }
  void signal(int signo) {
    if (process_) process_->signal(signo);
  }
  std::string log() const { return process_ ? process_->log() : ""; }
  // SIGTERM; the exit code (nullopt when it did not exit in time).
  std::optional<int> stop() {
    if (!process_) return std::nullopt;
    process_->signal(SIGTERM);
    auto code = process_->wait(std::chrono::seconds(20));
    process_.reset();
    return code;
  }

 private:
  gpuscale::testing::TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

}  // namespace gpuscale::adapter::testing
