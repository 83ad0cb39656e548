#include "gpuscale/reconciler/event_recorder.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {
namespace {

std::string randomSuffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

}  // namespace

EventTarget EventTarget::node(std::string name, std::string uid) {
  return {"Node", "v1", "", std::move(name), std::move(uid)};
}

EventTarget EventTarget::hpa(std::string ns, std::string name, std::string uid) {
  return {"HorizontalPodAutoscaler", "autoscaling/v2", std::move(ns), std::move(name),
          std::move(uid)};
}

KubeEventRecorder::KubeEventRecorder(std::shared_ptr<kube::KubeClient> client, std::string instance)
    : client_(std::move(client)), instance_(std::move(instance)) {}

core::Status KubeEventRecorder::bump(Series& series, int times, const std::string& now) {
  const int count = series.count + times;
  auto r = client_->patch(
      kube::ResourceRef::collection("", "v1", "events", series.ns).named(series.name),
      kube::PatchType::kMerge, kube::Object{{"count", count}, {"lastTimestamp", now}});
  if (!r) return r.status();
  series.count = count;
  return {};
}

bool KubeEventRecorder::recordRepeated(const EventTarget& target, bool warning,
                                       std::string_view reason, std::string_view message,
                                       int times) {
  times = std::max(1, times);
  const std::string ns = target.ns.empty() ? "default" : target.ns;
  const auto at = std::chrono::system_clock::now();
  const std::string now = core::formatRfc3339(at);
  const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", target.kind, ns,
                                      target.name, warning, reason, message);
  spdlog::log(warning ? spdlog::level::warn : spdlog::level::info, "event {} {}/{}: {} {}{}",
              target.kind, target.ns, target.name, reason, message,
              times > 1 ? fmt::format(" (x{})", times) : "");
  std::lock_guard lock(mu_);
  std::erase_if(series_, [&](const auto& kv) { return at - kv.second.last > kSeriesWindow; });
  if (auto it = series_.find(key); it != series_.end()) {
    it->second.last = at;
    auto s = bump(it->second, times, now);
    if (s.ok()) return true;
    if (!k8s::isNotFound(s)) {
      spdlog::warn("could not record event {}: {}", reason, s.message());
      return false;
    }
    series_.erase(it);  // the Event expired or was deleted: start a new one
  }
  kube::Object involved{
      {"kind", target.kind}, {"apiVersion", target.apiVersion}, {"name", target.name}};
  if (!target.ns.empty()) involved["namespace"] = target.ns;
  if (!target.uid.empty()) involved["uid"] = target.uid;
  Series series{ns, target.name + "." + randomSuffix(), times, at};
  kube::Object event{{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata", {{"name", series.name}, {"namespace", ns}}},
                     {"involvedObject", involved},
                     {"reason", reason},
                     {"message", message},
                     {"type", warning ? "Warning" : "Normal"},
                     {"source", {{"component", "gpuscale-reconciler"}}},
                     {"reportingComponent", std::string(k8s::kReconcilerComponent)},
                     {"reportingInstance", instance_},
                     {"firstTimestamp", now},
                     {"lastTimestamp", now},
                     {"count", times}};
  auto r = client_->create(kube::ResourceRef::collection("", "v1", "events", ns), event);
  if (!r) {
    spdlog::warn("could not record event {}: {}", reason, r.status().message());
    return false;
  }
  series_.emplace(key, std::move(series));
  return true;
}

bool MemoryEventRecorder::recordRepeated(const EventTarget& target, bool warning,
                                         std::string_view reason, std::string_view message,
                                         int times) {
  std::lock_guard lock(mu_);
  events_.push_back({target, warning, std::string(reason), std::string(message), times});
  return true;
}

std::vector<RecordedEvent> MemoryEventRecorder::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::vector<RecordedEvent> MemoryEventRecorder::withReason(std::string_view reason) const {
  std::lock_guard lock(mu_);
  std::vector<RecordedEvent> out;
  for (const auto& e : events_) {
    if (e.reason == reason) out.push_back(e);
  }
  return out;
}

}  // namespace gpuscale::reconciler
