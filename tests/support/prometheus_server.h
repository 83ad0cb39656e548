// A real Prometheus for tests and benchmarks: by default the Debian `/usr/bin/prometheus`, started
// on a free loopback port with its own temporary storage and a generated configuration (scraping
// the targets a test gives, every second by default), waited for until `/-/ready` answers, and
// stopped (SIGTERM, then SIGKILL) on destruction. Also: backfilling history with `promtool tsdb
// create-blocks-from openmetrics` (backfilled data ends in the past, so "now" queries over short
// ranges need a scraped exporter instead). $GPUSCALE_PROMETHEUS_DIR names another folder holding
// `prometheus` and `promtool` (another release of the backend matrix); when it is set, a missing
// binary fails the test instead of skipping it. $GPUSCALE_VICTORIAMETRICS_DIR starts
// VictoriaMetrics single-node instead, with the same scrape configuration and backfill
// (support/victoriametrics.h); $GPUSCALE_THANOS_DIR puts a Thanos sidecar and query in front of the
// Prometheus (support/thanos.h), and url() is then the query's. Neither takes a web config or route
// prefix (start() refuses them).
//
// Thread safety: one owner; url()/port()/rssBytes() may be read from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::test {

class ThanosQuery;

struct PrometheusServerOptions {
  // "host:port" targets of the one scrape job ("exporter").
  std::vector<std::string> scrapeTargets;
  std::string scrapeInterval = "1s";
  // --web.route-prefix (and external URL path), e.g. "/prom".
  std::string routePrefix;
  // Contents of --web.config.file (TLS, basic auth); empty for none. Paths in it are absolute.
  std::string webConfig;
  bool tls = false;  // set when webConfig serves TLS
  // The Authorization header the readiness probe sends (for basic auth web configs).
  std::string probeAuthorization;
  // The client certificate and key (PEM files) the readiness probe presents, for mutual-TLS web
  // configs.
  std::string probeClientCert;
  std::string probeClientKey;
  // Use this storage folder (e.g. backfilled); empty makes a fresh temporary one.
  std::string storageDir;
  // More flags of the backend under test (Prometheus' or VictoriaMetrics').
  std::vector<std::string> extraArgs;
  std::chrono::seconds readyTimeout{60};
};

class PrometheusServer {
 public:
  // True when the prometheus and promtool binaries are installed (always when
  // $GPUSCALE_PROMETHEUS_DIR is set).
  static bool available();
  static core::Result<std::unique_ptr<PrometheusServer>> start(PrometheusServerOptions options);
  // start() for a suite's static fixture: the server (the caller deletes it), or null with the
  // reason in `error`.
  static PrometheusServer* startForSuite(PrometheusServerOptions options, std::string& error);
  ~PrometheusServer();

  // Prometheus' (or VictoriaMetrics') port and process.
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Every process of the backend (Prometheus and, with Thanos, the sidecar and the query).
  std::vector<pid_t> pids() const;
  // Where clients talk to: the Thanos query's URL with Thanos, else prometheusUrl().
  std::string url() const;
  // "http(s)://127.0.0.1:<port><routePrefix>" of Prometheus (or VictoriaMetrics) itself.
  std::string prometheusUrl() const;
  const std::string& storageDir() const { return storageDir_; }
  // The server's own folder (configuration, log), removed with it.
  const std::string& workDir() const { return workDir_; }
  // The resident set size of every process of the backend now (VmRSS), 0 when unknown.
  uint64_t rssBytes() const;
  // The tail of the server's log (for failure messages).
  std::string logTail() const;
  // Stops the backend (Prometheus or VictoriaMetrics, and the Thanos processes); the storage stays.
  void stop();
  // Stops the backend if it runs and starts it again on the same port, configuration and storage
  // (the Thanos query on its port too), so clients keep url(); returns once it is ready again.
  core::Status restart();

 private:
  PrometheusServer() = default;
  // Starts the backend on port_ and waits until it is ready (then starts the Thanos query).
  core::Status launch();

  PrometheusServerOptions options_;
  std::string workDir_;
  std::string storageDir_;
  std::string logPath_;
  std::string scheme_ = "http";
  std::string prefix_;
  uint16_t port_ = 0;
  uint16_t queryPort_ = 0;  // the Thanos query's, 0 until it first starts
  pid_t pid_ = -1;
  std::unique_ptr<ThanosQuery> thanos_;
};

// The folder of the prometheus and promtool binaries under test: $GPUSCALE_PROMETHEUS_DIR (another
// release of the backend matrix, e.g. Prometheus 3 built by tests/cluster/build.sh), else /usr/bin.
std::string prometheusBinaryDir();
std::string prometheusBinary();
std::string promtoolBinary();

// A new empty folder under $TMPDIR (or /tmp) named "<prefix>XXXXXX".
std::string makeTempDir(const std::string& prefix);
// Removes a folder tree, ignoring errors.
void removeTree(const std::string& path);
// A loopback TCP port that was free a moment ago.
uint16_t freeLoopbackPort();
// Loads OpenMetrics text (must end with "# EOF") from `openMetricsFile` into TSDB blocks under
// `storageDir` (VictoriaMetrics: imports it through a server on `storageDir`, stopped afterwards).
core::Status backfillOpenMetrics(const std::string& openMetricsFile, const std::string& storageDir);
// A throwaway PKI made with the openssl command: a CA, a server certificate for 127.0.0.1/localhost
// and a client certificate, all PEM files in `dir`.
struct TestCertificates {
  std::string caCert;
  std::string serverCert;
  std::string serverKey;
  std::string clientCert;
  std::string clientKey;
};
core::Result<TestCertificates> generateTestCertificates(const std::string& dir);

// Runs a program (argv[0] is its path), waits, and returns its exit code; output goes to `logPath`.
int runProgram(const std::vector<std::string>& argv, const std::string& logPath);

}  // namespace gpuscale::test
