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

namespace gpuscale::sim {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

class InferenceLoadDriver::Impl {
 public:
  Impl(LoadSpec spec, LoadDriverOptions options, core::LabelSelector selector, PodSource pods)
      : namespace_(spec.namespaceName),
        selector_(std::move(selector)),
        options_(options),
        pods_(std::move(pods)),
        model_(std::move(spec), options.seed, options.speed) {}

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
    std::vector<LoadPod> pods;
    for (const PodDevice& d : pods_()) {
      if (d.namespaceName != namespace_ || !selector_.matches(d.labels)) continue;
      pods.push_back(
          {d.uid, d.namespaceName, d.name, d.device, d.computeFraction, d.mpsThreadFraction});
    }
    const auto now = Clock::now();
    const std::chrono::duration<double> elapsed = now - last_;
    last_ = now;
    // The pattern's clock starts with the service: when the first selected pod runs.
    started_ = started_ || !pods.empty();
    if (started_) model_.advance(elapsed.count(), pods);
    std::string text = renderTritonSeries(model_.tritonSeries());
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
    const double now = model_.seconds();
    history_.push_back({now, model_.deviceBusySeconds()});
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
    out += formatFamilyHeader("gpuscale_sim_load_offered_rps", "gauge",
                              "Requests per second the load pattern offers now");
    out +=
        fmt::format("gpuscale_sim_load_offered_rps {}\n", formatSampleValue(model_.offeredRps()));
    out += formatFamilyHeader("gpuscale_sim_load_pattern_seconds", "gauge",
                              "The load pattern's clock: seconds since start times the speed");
    out += fmt::format("gpuscale_sim_load_pattern_seconds {}\n",
                       formatSampleValue(model_.patternSeconds()));
    out += formatFamilyHeader("gpuscale_sim_load_requests_total", "counter",
                              "Requests of the load model");
    const LoadTotals& t = model_.totals();
    for (const auto& [result, n] : {std::pair<std::string, std::uint64_t>{"arrived", t.arrived},
                                    {"completed", t.completed},
                                    {"lost_no_pod", t.lostNoPod},
                                    {"lost_pod_gone", t.lostPodGone}}) {
      out += fmt::format("gpuscale_sim_load_requests_total{} {}\n",
                         formatLabelSet({{"result", result}}), n);
    }
    const auto truth = model_.truth();
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

  std::string namespace_;
  core::LabelSelector selector_;
  LoadDriverOptions options_;
  PodSource pods_;
  InferenceLoadModel model_;
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
    LoadSpec spec, LoadDriverOptions options, PodSource pods) {
  auto selector = core::LabelSelector::parse(spec.podSelector);
  if (!selector) {
    return core::Status::invalid("load.podSelector: " + selector.status().message());
  }
  if (!(options.speed > 0)) return core::Status::invalid("speed must be > 0");
  std::unique_ptr<InferenceLoadDriver> d(new InferenceLoadDriver());
  d->impl_ =
      std::make_unique<Impl>(std::move(spec), options, std::move(*selector), std::move(pods));
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
