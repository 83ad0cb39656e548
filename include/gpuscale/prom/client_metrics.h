// ClientMetrics: the prometheus-cpp ClientObserver, exporting for one backend
//   <prefix>_prometheus_request_duration_seconds{backend,endpoint}   histogram
//   <prefix>_prometheus_requests_total{backend,endpoint,result}      counter (result: "success" or
//                                                                    the failure class)
// `prefix` is the program's ("gpuscale_adapter", "gpuscale_reconciler"); `backend` is the backend's
// name ("default" for the --prometheus-* flags' server). Observers built again for the same backend
// on the same registry (a rule-file reload) continue the same series. Kept in its own target
// (gpuscale_prom_metrics) so the client itself does not depend on prometheus-cpp.
//
// Thread safety: thread-safe.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "gpuscale/prom/client_observer.h"

namespace gpuscale::prom {

class ClientMetrics final : public ClientObserver {
 public:
  ClientMetrics(prometheus::Registry& registry, std::string_view prefix,
                std::string backendName = "default");

  void callDone(std::string_view endpoint, std::string_view result, Seconds latency) override;

 private:
  prometheus::Counter& counter(std::string_view endpoint, std::string_view result);

  const std::string backend_;
  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Family<prometheus::Counter>& results_;
  std::map<std::string, prometheus::Histogram*, std::less<>> histograms_;  // by endpoint
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, prometheus::Counter*, std::less<>> counters_;
};

}  // namespace gpuscale::prom
