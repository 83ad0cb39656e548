#include "gpuscale/kube/client_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <string>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::kube {
namespace {

std::string text(std::string_view value) { return std::string(value); }

}  // namespace

struct KubeClientMetrics::Families {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
  prometheus::Histogram& rateLimiterWait;
  prometheus::Family<prometheus::Counter>& watchStarts;
  prometheus::Family<prometheus::Counter>& relistsAfterGone;
  prometheus::Family<prometheus::Counter>& informerLists;
  prometheus::Family<prometheus::Gauge>& lastSync;
};

KubeClientMetrics::KubeClientMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)) {
  auto& r = *registry_;
  families_.reset(new Families{
      core::counterFamily(
          r, "gpuscale_kube_client_requests_total",
          "Requests to the Kubernetes API by verb, resource and response code class "
          "(error: no response)"),
      core::histogramFamily(
          r, "gpuscale_kube_client_request_duration_seconds",
          "Time from sending a request to the Kubernetes API to its response, by verb"),
      core::histogramFamily(
          r, "gpuscale_kube_client_rate_limiter_wait_seconds",
          "Time requests waited for the client-side rate limiter (--client-qps/-burst)")
          .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1,
                                                           2.5, 5, 10}),
      core::counterFamily(r, "gpuscale_kube_client_watch_starts_total",
                          "Watches opened by informers (after a LIST or resuming an ended stream)"),
      core::counterFamily(
          r, "gpuscale_kube_client_watch_relists_after_gone_total",
          "Watches that ended with 410 Gone (compacted resourceVersion) and relisted"),
      core::counterFamily(r, "gpuscale_kube_informer_lists_total",
                          "Complete LISTs applied to an informer cache (initial sync and relists)"),
      core::gaugeFamily(r, "gpuscale_kube_informer_last_sync_timestamp_seconds",
                        "Unix time of the last complete LIST applied to an informer cache")});
}

KubeClientMetrics::~KubeClientMetrics() = default;

void KubeClientMetrics::requestDone(std::string_view verb, std::string_view resource, int code,
                                    Seconds latency) {
  families_->requests
      .Add({{"verb", text(verb)}, {"resource", text(resource)}, {"code", codeClass(code)}})
      .Increment();
  families_->latency
      .Add({{"verb", text(verb)}},
           prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                                                   5, 10, 30})
      .Observe(latency.count());
}

void KubeClientMetrics::rateLimiterWaited(Seconds wait) {
  families_->rateLimiterWait.Observe(wait.count());
}

void KubeClientMetrics::watchStarted(std::string_view resource) {
  families_->watchStarts.Add({{"resource", text(resource)}}).Increment();
}

void KubeClientMetrics::relistedAfterGone(std::string_view resource) {
  families_->relistsAfterGone.Add({{"resource", text(resource)}}).Increment();
}

void KubeClientMetrics::informerListed(std::string_view resource) {
  families_->informerLists.Add({{"resource", text(resource)}}).Increment();
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  families_->lastSync.Add({{"resource", text(resource)}}).Set(now);
}

}  // namespace gpuscale::kube
