#include "gpuscale/sim/inference_load_driver.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/sim/inference_load_model.h"
#include "gpuscale/sim/triton_exposition.h"
#include "gpuscale/sim/vllm_exposition.h"

namespace gpuscale::sim {
namespace {

using Clock = std::chrono::steady_clock;

// One service: which pods are its own, and its model.
struct ServiceModel {
  std::string name;  // "" for a single `load:`
  std::string namespaceName;
  core::LabelSelector selector;
  InferenceLoadModel model;
};

}  // namespace

class InferenceLoadDriver::Impl {
 public:
  Impl(std::vector<ServiceModel> services, LoadDriverOptions options, PodSource pods)
      : services_(std::move(services)), options_(options), pods_(std::move(pods)) {}

  void start() {
    last_ = Clock::now();
    worker_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        tick();
        std::unique_lock lock(sleepMu_);
        sleep_.wait_for(lock, stop, options_.tick, [] { return false; });
      }
    });
  }

  void stop() {
    worker_.request_stop();
    if (worker_.joinable()) worker_.join();
  }

  std::string render() const {
    std::lock_guard lock(mu_);
    return exposition_;
  }

  std::map<std::string, double> deviceBusyFraction() const {
    std::lock_guard lock(mu_);
    return busy_;
  }

 private:
  void tick() {
    const std::vector<PodDevice> devices = pods_();
    std::vector<std::vector<LoadPod>> pods(services_.size());
    for (std::size_t i = 0; i < services_.size(); ++i) {
      for (const PodDevice& d : devices) {
        if (d.namespaceName != services_[i].namespaceName ||
            !services_[i].selector.matches(d.labels)) {
          continue;
        }
        pods[i].push_back(
            {d.uid, d.namespaceName, d.name, d.device, d.computeFraction, d.mpsThreadFraction});
      }
      // The patterns' clock starts with the first service: when its first selected pod runs.
      started_ = started_ || !pods[i].empty();
    }
    const auto now = Clock::now();
    const std::chrono::duration<double> elapsed = now - last_;
    last_ = now;
    std::vector<TritonPodSeries> triton;
    std::vector<VllmEngineSeries> vllm;
    for (std::size_t i = 0; i < services_.size(); ++i) {
      InferenceLoadModel& model = services_[i].model;
      if (started_) model.advance(elapsed.count(), pods[i]);
      if (options_.server == InferenceServer::kVllm) {
        auto more = model.vllmSeries();
        vllm.insert(vllm.end(), more.begin(), more.end());
      } else {
        auto more = model.tritonSeries();
        triton.insert(triton.end(), more.begin(), more.end());
      }
    }
    std::string text = options_.server == InferenceServer::kVllm ? renderVllmSeries(vllm)
                                                                 : renderTritonSeries(triton);
    text += renderTruth();
    auto busy = started_ ? windowedBusy() : std::map<std::string, double>{};
    std::lock_guard lock(mu_);
    exposition_ = std::move(text);
    busy_ = std::move(busy);
  }

  // Busy seconds per device over the last kBusyWindowSeconds of model time, from the history of
  // the model's cumulative counters (one entry per tick; the oldest kept is at or before the
  // window's start).
  std::map<std::string, double> windowedBusy() {
    const double now = services_.front().model.seconds();
    std::map<std::string, double> total;
    for (const ServiceModel& service : services_) {
      for (const auto& [device, seconds] : service.model.deviceBusySeconds()) {
        total[device] += seconds;
      }
    }
    history_.push_back({now, std::move(total)});
    while (history_.size() > 2 && history_[1].seconds <= now - kBusyWindowSeconds) {
      history_.pop_front();
    }
    const BusySnapshot& from = history_.front();
    const double span = now - from.seconds;
    std::map<std::string, double> out;
    if (span <= 0) return out;
    for (const auto& [device, seconds] : history_.back().busy) {
      auto before = from.busy.find(device);
      const double done = seconds - (before == from.busy.end() ? 0.0 : before->second);
      out[device] = std::clamp(done / span, 0.0, 1.0);
    }
    return out;
  }

  std::string renderTruth() const {
    std::string out;
    // A named service's samples carry its name; a single `load:` keeps the unlabelled series.
    auto labels = [](const ServiceModel& service,
                     std::vector<std::pair<std::string, std::string>> more) {
      if (!service.name.empty()) more.insert(more.begin(), {"service", service.name});
      return more.empty() ? std::string() : formatLabelSet(more);
    };
    out += formatFamilyHeader("gpuscale_sim_load_offered_rps", "gauge",
                              "Requests per second the load pattern offers now");
    for (const ServiceModel& service : services_) {
      out += fmt::format("gpuscale_sim_load_offered_rps{} {}\n", labels(service, {}),
                         formatSampleValue(service.model.offeredRps()));
    }
    out += formatFamilyHeader("gpuscale_sim_load_pattern_seconds", "gauge",
                              "The load pattern's clock: seconds since start times the speed");
    out += fmt::format("gpuscale_sim_load_pattern_seconds {}\n",
                       formatSampleValue(services_.front().model.patternSeconds()));
    out += formatFamilyHeader("gpuscale_sim_load_requests_total", "counter",
                              "Requests of the load model");
    for (const ServiceModel& service : services_) {
      const LoadTotals& t = service.model.totals();
      for (const auto& [result, n] : {std::pair<std::string, std::uint64_t>{"arrived", t.arrived},
                                      {"completed", t.completed},
                                      {"lost_no_pod", t.lostNoPod},
                                      {"lost_pod_gone", t.lostPodGone}}) {
        out += fmt::format("gpuscale_sim_load_requests_total{} {}\n",
                           labels(service, {{"result", result}}), n);
      }
    }
    std::vector<LoadPodTruth> truth;
    for (const ServiceModel& service : services_) {
      auto more = service.model.truth();
      truth.insert(truth.end(), more.begin(), more.end());
    }
    auto perPod = [&](std::string_view name, std::string_view help, auto value) {
      out += formatFamilyHeader(name, "gauge", help);
      for (const LoadPodTruth& p : truth) {
        out += fmt::format("{}{} {}\n", name,
                           formatLabelSet({{"namespace", p.namespaceName}, {"pod", p.name}}),
                           formatSampleValue(value(p)));
      }
    };
    perPod("gpuscale_sim_load_pod_queue_length", "Requests waiting in the pod's queue",
           [](const LoadPodTruth& p) { return static_cast<double>(p.queueLength); });
    perPod("gpuscale_sim_load_pod_device_busy",
           "Pods with work on the pod's device (time-slicing sharers)",
           [](const LoadPodTruth& p) { return static_cast<double>(p.sharersBusy); });
    perPod("gpuscale_sim_load_pod_compute_fraction",
           "Compute of the pod's device as a share of a whole GPU",
           [](const LoadPodTruth& p) { return p.computeFraction; });
    return out;
  }

  std::vector<ServiceModel> services_;  // not empty
  LoadDriverOptions options_;
  PodSource pods_;
  Clock::time_point last_;
  bool started_ = false;
  struct BusySnapshot {
    double seconds = 0;
    std::map<std::string, double> busy;
  };
  std::deque<BusySnapshot> history_;  // tick thread only
  mutable std::mutex mu_;
  std::string exposition_;
  std::map<std::string, double> busy_;
  std::mutex sleepMu_;
  std::condition_variable_any sleep_;
  std::jthread worker_;
};

core::Result<std::unique_ptr<InferenceLoadDriver>> InferenceLoadDriver::create(
    std::vector<ServiceSpec> services, LoadDriverOptions options, PodSource pods) {
  if (services.empty()) return core::Status::invalid("no load to drive");
  if (!(options.speed > 0)) return core::Status::invalid("speed must be > 0");
  std::vector<ServiceModel> models;
  for (ServiceSpec& service : services) {
    auto selector = core::LabelSelector::parse(service.load.podSelector);
    if (!selector) {
      const std::string where = service.name.empty() ? "load" : "service " + service.name;
      return core::Status::invalid(where + ": podSelector: " + selector.status().message());
    }
    const std::uint64_t seed = options.seed + models.size();
    std::string ns = service.load.namespaceName;
    models.push_back({std::move(service.name), std::move(ns), std::move(*selector),
                      InferenceLoadModel(std::move(service.load), seed, options.speed)});
  }
  std::unique_ptr<InferenceLoadDriver> d(new InferenceLoadDriver());
  d->impl_ = std::make_unique<Impl>(std::move(models), options, std::move(pods));
  return d;
}

InferenceLoadDriver::~InferenceLoadDriver() {
  if (impl_) impl_->stop();
}

void InferenceLoadDriver::start() { impl_->start(); }
void InferenceLoadDriver::stop() { impl_->stop(); }
std::string InferenceLoadDriver::render() const { return impl_->render(); }
std::map<std::string, double> InferenceLoadDriver::deviceBusyFraction() const {
  return impl_->deviceBusyFraction();
}

}  // namespace gpuscale::sim
