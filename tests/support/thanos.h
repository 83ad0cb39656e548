// Thanos as a backend of the test matrix: a `thanos sidecar` beside the Prometheus under test (the
// StoreAPI over Prometheus' remote-read and HTTP APIs) and `thanos query` in front of it (the
// Prometheus HTTP API over the StoreAPI), both on loopback ports. Clients talk to the query's HTTP
// port; the Prometheus behind it scrapes and stores as usual, with the external labels below
// (the sidecar refuses to start without any), so backfill with promtool works unchanged.
//
// How it answers differently from Prometheus (pinned by the `_thanos` test variants):
//  - every series, query result and label-name list carries the external labels that are not
//    replica labels (`cluster` here); the replica label (`replica`, --query.replica-label) is
//    removed by deduplication everywhere;
//  - `limit` on the label and series APIs truncates with the warning "results truncated due to
//    limit";
//  - partial response is on by default: when the Prometheus behind the sidecar is down, queries and
//    label calls answer 200 with no data and a warning, unless the request says
//    `partial_response=false` (then it is an error);
//  - `/api/v1/status/buildinfo` reports Thanos' own version.
//
// Thread safety: one owner; url()/pids() may be read from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::testing {
class BackgroundProcess;
}

namespace gpuscale::test {

// The external labels of the Prometheus behind the sidecar: `cluster` stays on every series,
// `replica` is the query's replica label.
inline constexpr const char* kThanosClusterLabel = "cluster";
inline constexpr const char* kThanosClusterValue = "gpuscale-test";
inline constexpr const char* kThanosReplicaLabel = "replica";

// The --prometheus-url an adapter in front of the backend under test gets, as docs/operations.md
// recommends: `url`, with Thanos with partial responses turned off (`/?partial_response=false`).
std::string adapterUrl(const std::string& url);

// thanos in $GPUSCALE_THANOS_DIR.
std::string thanosBinary();
// The line of a Prometheus configuration's `global:` section that sets the external labels above
// (indented by two spaces, ending in a newline).
std::string thanosExternalLabelsYaml();

class ThanosQuery {
 public:
  // Starts a sidecar for the Prometheus at `prometheusUrl` and a query in front of it, their logs
  // in `workDir`; the query's HTTP API listens on 127.0.0.1:`httpPort` (0: a free port). Ready when
  // the query lists the sidecar among its stores with the external labels and answers a query.
  static core::Result<std::unique_ptr<ThanosQuery>> start(
      const std::string& prometheusUrl, const std::string& workDir, uint16_t httpPort = 0,
      std::chrono::seconds timeout = std::chrono::seconds(60));
  ~ThanosQuery();
  ThanosQuery(const ThanosQuery&) = delete;
  ThanosQuery& operator=(const ThanosQuery&) = delete;

  // "http://127.0.0.1:<port>" of the query.
  std::string url() const;
  uint16_t port() const { return port_; }
  // The sidecar's and the query's process ids (for CPU and memory accounting).
  std::vector<pid_t> pids() const;
  // The tails of both logs (for failure messages).
  std::string logTail() const;
  // SIGTERM to the query, then the sidecar; waits for both.
  void stop();

 private:
  ThanosQuery() = default;
  uint16_t port_ = 0;
  std::unique_ptr<testing::BackgroundProcess> sidecar_;
  std::unique_ptr<testing::BackgroundProcess> query_;
};

}  // namespace gpuscale::test
