// A tiny metrics exporter for tests: an HTTP server on a free loopback port whose `/metrics` serves
// the text exposition format of series the test sets and changes while Prometheus scrapes it.
// Triton pods are rendered by the simulator's Triton formatter (gpuscale/sim/triton_exposition.h),
// so tests scrape exactly the families and labels `gpuscale-sim` serves.
//
// Thread safety: thread-safe; set()/add() may run while the exporter is being scraped.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "gpuscale/sim/triton_exposition.h"
#include "support/http_test_server.h"

namespace gpuscale::test {

class ExporterServer {
 public:
  using Labels = std::map<std::string, std::string>;

  ExporterServer();

  // "127.0.0.1:<port>" (a scrape target).
  std::string target() const;
  // Sets or adds to the value of the series `name{labels}`; `type` is the TYPE line of the family.
  void set(const std::string& name, const Labels& labels, double value,
           const std::string& type = "gauge");
  void add(const std::string& name, const Labels& labels, double delta,
           const std::string& type = "counter");
  // Removes every series of `name`.
  void clear(const std::string& name);
  // Adds to one pod's Triton counters (created with every family at 0): `requests` successful
  // requests that waited `queueMicros` µs in the queue in total.
  void addTritonRequests(const std::string& ns, const std::string& pod, double requests,
                         double queueMicros);
  // The exposition as served now.
  std::string render() const;
  size_t scrapes() const { return server_->requestCount(); }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> types_;
  std::map<std::string, std::map<Labels, double>> families_;
  std::map<std::pair<std::string, std::string>, sim::TritonPodSeries> triton_;  // (ns, pod)
  std::unique_ptr<HttpTestServer> server_;
};

}  // namespace gpuscale::test
