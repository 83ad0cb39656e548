#include "server_metrics.h"

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "request_parser.h"

#include "gpuscale/core/metric_families.h"

namespace gpuscale::apiserver::detail {

void RateLimitedWarning::warn(const std::string& key, std::string_view text) {
  const auto now = std::chrono::steady_clock::now();
  uint64_t suppressed = 0;
  {
    std::lock_guard lock(mutex_);
    auto [it, first] = entries_.try_emplace(key);
    if (!first && now - it->second.last < kLogInterval) {
      ++it->second.suppressed;
      return;
    }
    suppressed = it->second.suppressed;
    it->second = Entry{now, 0};
  }
  if (suppressed == 0) {
    spdlog::warn("{} (logged at most every {} min)", text, kLogInterval.count());
  } else {
    spdlog::warn("{} ({} more since the last message)", text, suppressed);
  }
}

void ServerMetrics::registerOn(prometheus::Registry& registry) {
  if (rejectedRequests_ != nullptr) return;
  rejectedRequests_ = &core::counter(
      registry, "gpuscale_apiserver_rejected_requests_total",
      "Requests answered 429 because --max-requests-inflight requests were in flight.");
  timeouts_ = &core::counter(registry, "gpuscale_apiserver_request_timeouts_total",
                             "Requests answered 504 because they outlived --request-timeout.");
  rejectedConnections_ =
      &core::counterFamily(registry, "gpuscale_apiserver_rejected_connections_total",
                           "Connections closed on accept, by listener and reason "
                           "(listener_full, source_full).");
  refusedRequests_ =
      &core::counterFamily(registry, "gpuscale_apiserver_refused_requests_total",
                           "Requests answered 431, 413, 400 or (not_probe) 503 and their "
                           "connection closed, by listener and the limit they exceeded.");
  connectionTimeouts_ =
      &core::counterFamily(registry, "gpuscale_apiserver_connection_timeouts_total",
                           "Connections closed by a deadline, by listener and deadline "
                           "(first_request, request_read, write).");
  internalErrors_ =
      &core::counterFamily(registry, "gpuscale_apiserver_internal_errors_total",
                           "Exceptions caught around connection handlers; the connection "
                           "was dropped and the server went on.");
  openConnections_ = &core::gaugeFamily(registry, "gpuscale_apiserver_open_connections",
                                        "Open client connections, by listener.");
  admittedRequests_ =
      &core::gauge(registry, "gpuscale_apiserver_admitted_requests",
                   "Requests holding an in-flight slot (running or waiting for a handler thread).");
}

prometheus::Counter* ServerMetrics::counter(prometheus::Family<prometheus::Counter>* family,
                                            std::map<std::string, std::string> labels) {
  return family == nullptr ? nullptr : &family->Add(labels);
}

void ServerMetrics::requestRejected(unsigned limit) {
  if (rejectedRequests_ != nullptr) rejectedRequests_->Increment();
  warnings_.warn("429", fmt::format("{} requests in flight (--max-requests-inflight): answering "
                                    "429 to further ones; gpuscale_apiserver_rejected_requests_"
                                    "total counts them",
                                    limit));
}

void ServerMetrics::requestTimedOut(long long timeoutMs) {
  if (timeouts_ != nullptr) timeouts_->Increment();
  warnings_.warn("504", fmt::format("a request took longer than --request-timeout ({} ms) and was "
                                    "answered 504; gpuscale_apiserver_request_timeouts_total "
                                    "counts them",
                                    timeoutMs));
}

void ServerMetrics::connectionRejected(std::string_view listener, bool source, size_t limit) {
  const std::string label = source ? "source_full" : "listener_full";
  if (auto* c =
          counter(rejectedConnections_, {{"listener", std::string(listener)}, {"reason", label}})) {
    c->Increment();
  }
  warnings_.warn(
      fmt::format("connection {} {}", listener, label),
      fmt::format("{} listener: {} connections open {}: closing new ones at once; "
                  "gpuscale_apiserver_rejected_connections_total{{reason=\"{}\"}} counts them",
                  listener, limit, source ? "from one source address" : "(and its probe reserve)",
                  label));
}

void ServerMetrics::requestRefused(std::string_view listener, RequestRefusal refusal) {
  const std::string label(refusalLabel(refusal));
  if (auto* c =
          counter(refusedRequests_, {{"listener", std::string(listener)}, {"limit", label}})) {
    c->Increment();
  }
  warnings_.warn(fmt::format("refused {} {}", listener, label),
                 fmt::format("{} listener: a request exceeded the {} limit and was answered {}, "
                             "its connection closed; gpuscale_apiserver_refused_requests_total "
                             "counts them",
                             listener, label, refusalStatus(refusal)));
}

void ServerMetrics::probeOnlyRefused(std::string_view listener) {
  if (auto* c = counter(refusedRequests_,
                        {{"listener", std::string(listener)}, {"limit", "not_probe"}})) {
    c->Increment();
  }
  warnings_.warn(fmt::format("refused {} not_probe", listener),
                 fmt::format("{} listener: full; a connection in the room kept for health probes "
                             "asked for something else and was answered 503; "
                             "gpuscale_apiserver_refused_requests_total counts them",
                             listener));
}

void ServerMetrics::connectionTimedOut(std::string_view listener, ConnectionDeadline deadline) {
  const char* label = deadline == ConnectionDeadline::kFirstRequest  ? "first_request"
                      : deadline == ConnectionDeadline::kRequestRead ? "request_read"
                                                                     : "write";
  if (auto* c = counter(connectionTimeouts_,
                        {{"listener", std::string(listener)}, {"deadline", label}})) {
    c->Increment();
  }
  warnings_.warn(fmt::format("deadline {} {}", listener, label),
                 fmt::format("{} listener: a connection missed its {} deadline and was closed; "
                             "gpuscale_apiserver_connection_timeouts_total counts them",
                             listener, label));
}

void ServerMetrics::internalError(std::string_view where, std::string_view what) {
  if (auto* c = counter(internalErrors_, {{"where", std::string(where)}})) c->Increment();
  warnings_.warn(fmt::format("internal {}", where),
                 fmt::format("an exception escaped a {} handler and was caught (the connection "
                             "was dropped, the server goes on): {}; "
                             "gpuscale_apiserver_internal_errors_total counts them",
                             where, what));
}

void ServerMetrics::setOpenConnections(std::string_view listener, size_t open) {
  if (openConnections_ != nullptr) {
    openConnections_->Add({{"listener", std::string(listener)}}).Set(static_cast<double>(open));
  }
}

void ServerMetrics::setAdmittedRequests(unsigned admitted) {
  if (admittedRequests_ != nullptr) admittedRequests_->Set(admitted);
}

}  // namespace gpuscale::apiserver::detail
