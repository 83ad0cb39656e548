#include "gpuscale/apiserver/serving_tls.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <boost/asio/ssl/context.hpp>
#include <ctime>

#include "tls_context.h"

#include "gpuscale/core/metric_families.h"

namespace gpuscale::apiserver {

struct ServingTls::Metrics {
  std::shared_ptr<prometheus::Registry> registry;  // owns the families below
  prometheus::Counter* successes = nullptr;
  prometheus::Counter* failures = nullptr;
  prometheus::Gauge* lastSuccessful = nullptr;
  prometheus::Gauge* expiry = nullptr;

  explicit Metrics(std::shared_ptr<prometheus::Registry> shared) : registry(std::move(shared)) {
    auto& reloads =
        core::counterFamily(*registry, "gpuscale_serving_tls_reloads_total",
                            "TLS context rebuilds after the serving certificate or the client "
                            "CAs changed, by result (a failure keeps the previous context)");
    successes = &reloads.Add({{"result", "success"}});
    failures = &reloads.Add({{"result", "failure"}});
    lastSuccessful = &core::gauge(*registry, "gpuscale_serving_tls_last_reload_successful",
                                  "1 if the last TLS reload attempt succeeded or nothing changed, "
                                  "0 if the serving certificate, key or client CAs were rejected");
    lastSuccessful->Set(1);
    expiry = &core::gauge(*registry, "gpuscale_serving_certificate_expiry_timestamp_seconds",
                          "When the serving certificate in use expires (Unix time; its notAfter), "
                          "so an alert can fire before a rotation that never came");
  }

  void setExpiry(const TlsConfig& config) const {
    auto notAfter = certificateNotAfter(config.certificateChainPem);
    if (!notAfter) return;
    expiry->Set(static_cast<double>(
        std::chrono::duration_cast<std::chrono::seconds>(notAfter->time_since_epoch()).count()));
  }
};

namespace {

// "until 2026-05-01 12:00:00 UTC" of a chain's leaf, for the reload log line.
std::string validity(const TlsConfig& config) {
  auto notAfter = certificateNotAfter(config.certificateChainPem);
  if (!notAfter) return "with an unreadable expiry";
  const std::time_t t = std::chrono::system_clock::to_time_t(*notAfter);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return std::string("valid until ") + text;
}

}  // namespace

core::Result<std::shared_ptr<ServingTls>> ServingTls::create(
    TlsConfigLoader loader, const std::shared_ptr<prometheus::Registry>& registry) {
  auto config = loader();
  if (!config) return config.status();
  auto context = detail::makeServerTlsContext(*config);
  if (!context) return context.status();
  std::shared_ptr<ServingTls> tls(
      new ServingTls(std::move(loader), registry ? std::make_unique<Metrics>(registry) : nullptr));
  if (tls->metrics_) tls->metrics_->setExpiry(*config);
  tls->context_ = std::move(*context);
  tls->config_ = std::move(*config);
  tls->generation_ = 1;
  return tls;
}

ServingTls::ServingTls(TlsConfigLoader loader, std::unique_ptr<Metrics> metrics)
    : loader_(std::move(loader)), metrics_(std::move(metrics)) {}

ServingTls::~ServingTls() { stopPolling(); }

std::shared_ptr<boost::asio::ssl::context> ServingTls::current() const {
  std::lock_guard lock(mu_);
  return context_;
}

TlsConfig ServingTls::currentConfig() const {
  std::lock_guard lock(mu_);
  return config_;
}

uint64_t ServingTls::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

void ServingTls::recordFailure(const core::Status& error) {
  if (metrics_) {
    metrics_->failures->Increment();
    metrics_->lastSuccessful->Set(0);
  }
  if (error.message() != lastLoggedError_) {
    spdlog::error(
        "TLS reload failed, new connections keep the previous certificate and client "
        "CAs: {}",
        error.message());
    lastLoggedError_ = error.message();
  }
}

core::Status ServingTls::reload() {
  std::lock_guard reloading(reloadMu_);
  auto config = loader_();
  if (!config) {
    recordFailure(config.status());
    return config.status();
  }
  if (*config == currentConfig()) {
    if (metrics_) metrics_->lastSuccessful->Set(1);
    lastLoggedError_.clear();
    return {};
  }
  auto context = detail::makeServerTlsContext(*config);
  if (!context) {
    recordFailure(context.status());
    return context.status();
  }
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    context_ = std::move(*context);
    config_ = std::move(*config);
    generation = ++generation_;
  }
  const TlsConfig now = currentConfig();
  if (metrics_) {
    metrics_->successes->Increment();
    metrics_->lastSuccessful->Set(1);
    metrics_->setExpiry(now);
  }
  lastLoggedError_.clear();
  spdlog::info(
      "TLS context reloaded (generation {}): new connections use the serving certificate {} "
      "and the new client CA list",
      generation, validity(now));
  return {};
}

void ServingTls::startPolling(std::chrono::milliseconds interval) {
  stopPolling();
  poller_ = std::jthread([this, interval](std::stop_token stop) {
    while (!stop.stop_requested()) {
      {
        std::unique_lock lock(pollMu_);
        pollCv_.wait_for(lock, stop, interval, [this] { return reloadRequested_; });
        reloadRequested_ = false;
      }
      if (stop.stop_requested()) return;
      (void)reload();  // errors are logged and counted by reload()
    }
  });
}

void ServingTls::requestReload() {
  {
    std::lock_guard lock(pollMu_);
    reloadRequested_ = true;
  }
  pollCv_.notify_all();
}

void ServingTls::stopPolling() {
  if (!poller_.joinable()) return;
  poller_.request_stop();
  pollCv_.notify_all();
  poller_.join();
}

}  // namespace gpuscale::apiserver
