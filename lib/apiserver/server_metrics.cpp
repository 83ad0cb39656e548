#include "server_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

namespace gpuscale::apiserver::detail {

void ServerMetrics::registerOn(prometheus::Registry& registry) {
  if (rejectedRequests_ != nullptr) return;
  rejectedRequests_ =
      &prometheus::BuildCounter()
           .Name("gpuscale_apiserver_rejected_requests_total")
           .Help("Requests answered 429 because --max-requests-inflight requests were in flight.")
           .Register(registry)
           .Add({});
  timeouts_ = &prometheus::BuildCounter()
                   .Name("gpuscale_apiserver_request_timeouts_total")
                   .Help("Requests answered 504 because they outlived --request-timeout.")
                   .Register(registry)
                   .Add({});
  rejectedConnections_ =
      &prometheus::BuildCounter()
           .Name("gpuscale_apiserver_rejected_connections_total")
           .Help("Connections closed on accept because --max-connections were open.")
           .Register(registry)
           .Add({});
  openConnections_ = &prometheus::BuildGauge()
                          .Name("gpuscale_apiserver_open_connections")
                          .Help("Open client connections (HTTPS and plain /metrics).")
                          .Register(registry)
                          .Add({});
  admittedRequests_ =
      &prometheus::BuildGauge()
           .Name("gpuscale_apiserver_admitted_requests")
           .Help("Requests holding an in-flight slot (running or waiting for a handler thread).")
           .Register(registry)
           .Add({});
}

void ServerMetrics::requestRejected(unsigned limit) {
  if (rejectedRequests_ != nullptr) rejectedRequests_->Increment();
  if (!loggedRejectedRequest_.exchange(true)) {
    spdlog::warn(
        "{} requests in flight (--max-requests-inflight): answering 429 to further ones; this is "
        "logged once, gpuscale_apiserver_rejected_requests_total counts them",
        limit);
  }
}

void ServerMetrics::requestTimedOut(long long timeoutMs) {
  if (timeouts_ != nullptr) timeouts_->Increment();
  if (!loggedTimeout_.exchange(true)) {
    spdlog::warn(
        "a request took longer than --request-timeout ({} ms) and was answered 504; this is "
        "logged once, gpuscale_apiserver_request_timeouts_total counts them",
        timeoutMs);
  }
}

void ServerMetrics::connectionRejected(size_t limit) {
  if (rejectedConnections_ != nullptr) rejectedConnections_->Increment();
  if (!loggedRejectedConnection_.exchange(true)) {
    spdlog::warn(
        "{} connections open (--max-connections): closing new ones at once; this is logged once, "
        "gpuscale_apiserver_rejected_connections_total counts them",
        limit);
  }
}

void ServerMetrics::setOpenConnections(size_t open) {
  if (openConnections_ != nullptr) openConnections_->Set(static_cast<double>(open));
}

void ServerMetrics::setAdmittedRequests(unsigned admitted) {
  if (admittedRequests_ != nullptr) admittedRequests_->Set(admitted);
}

}  // namespace gpuscale::apiserver::detail
