// InstrumentedClient: a prom::Client decorator that measures every call that reaches the backend,
// for `/metrics`:
//   gpuscale_adapter_prometheus_request_duration_seconds{backend,endpoint}   histogram
//   gpuscale_adapter_prometheus_requests_total{backend,endpoint,result}      counter (result:
//                                                     "success" or the failure class, e.g.
//                                                     "timeout", "connection failed")
// `backend` is the backend's name (backend.h; "default" for the --prometheus-* flags' server),
// `endpoint` is "query", "series", "label_values" or "labels". Clients built again for the same
// backend (a rule-file reload) continue the same series. Placed between the cache and the
// HTTP client, it counts real Prometheus calls (cache hits and coalesced callers are not calls).
//
// Thread safety: thread-safe, like the wrapped client.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/prom/client.h"

namespace gpuscale::adapter {

class InstrumentedClient final : public prom::Client {
 public:
  InstrumentedClient(std::shared_ptr<prom::Client> backend,
                     std::shared_ptr<prometheus::Registry> registry,
                     std::string backendName = "default");

  void queryAsync(std::string promql, prom::Timestamp at,
                  prom::Callback<prom::QueryResultPtr> done) override;
  void seriesAsync(prom::Matchers match, prom::TimeRange window,
                   prom::Callback<std::vector<prom::Series>> done) override;
  void labelValuesAsync(std::string label, prom::Matchers match, prom::TimeRange window,
                        prom::Callback<std::vector<std::string>> done) override;
  void labelNamesAsync(prom::Matchers match, prom::TimeRange window,
                       prom::Callback<std::vector<std::string>> done) override;

  struct Endpoint;

 private:
  std::shared_ptr<prom::Client> backend_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<Endpoint> query_, series_, labelValues_, labelNames_;
};

}  // namespace gpuscale::adapter
