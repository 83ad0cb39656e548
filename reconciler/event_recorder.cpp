#include "gpuscale/reconciler/event_recorder.h"

#include <chrono>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

void KubeEventRecorder::record(const EventTarget& target, bool warning, std::string_view reason,
                               std::string_view message) {
  const std::string ns = target.ns.empty() ? "default" : target.ns;
  const std::string now = formatTime(std::chrono::system_clock::now());
  kube::Object involved{
      {"kind", target.kind}, {"apiVersion", target.apiVersion}, {"name", target.name}};
  if (!target.ns.empty()) involved["namespace"] = target.ns;
  if (!target.uid.empty()) involved["uid"] = target.uid;
  kube::Object event{
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", target.name + "." + randomSuffix()}, {"namespace", ns}}},
      {"involvedObject", involved},
      {"reason", reason},
      {"message", message},
      {"type", warning ? "Warning" : "Normal"},
      {"source", {{"component", "gpuscale-reconciler"}}},
      {"reportingComponent", "gpuscale.io/reconciler"},
      {"reportingInstance", instance_},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
  auto r = client_->create(kube::ResourceRef::collection("", "v1", "events", ns), event);
  spdlog::log(warning ? spdlog::level::warn : spdlog::level::info, "event {} {}/{}: {} {}",
              target.kind, target.ns, target.name, reason, message);
  if (!r) spdlog::warn("could not record event {}: {}", reason, r.status().message());
}

void MemoryEventRecorder::record(const EventTarget& target, bool warning, std::string_view reason,
                                 std::string_view message) {
  std::lock_guard lock(mu_);
  events_.push_back({target, warning, std::string(reason), std::string(message)});
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
