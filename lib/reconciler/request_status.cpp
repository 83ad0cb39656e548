#include "gpuscale/reconciler/request_status.h"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

#include "actuator_internal.h"
#include "ceiling_holder.h"
#include "gpuscale/core/ascii.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/why_not.h"
#include "gpuscale/reconciler/hpa_explain.h"
#include "gpuscale/reconciler/optimistic_write.h"

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;
using partition::CapacityRequestCondition;
using partition::CapacityRequestVerdict;

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string stringOf(const json& object, const char* key) {
  const json* v = member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::int64_t integerOf(const json* object, const char* key) {
  const json* v = object != nullptr ? member(*object, key) : nullptr;
  return v != nullptr && v->is_number_integer() ? v->get<std::int64_t>() : -1;
}

// Whether typed request `r` says `verdict` already (the cached object: no read needed).
bool says(const partition::CapacityRequest& r, const CapacityRequestVerdict& verdict) {
  if (r.observedGeneration != r.generation) return false;
  return std::any_of(r.conditions.begin(), r.conditions.end(),
                     [&](const CapacityRequestCondition& c) { return c == verdict.condition; });
}

}  // namespace

std::optional<json> requestStatusPatch(const json& object, const CapacityRequestVerdict& verdict,
                                       bool writeGranted, TimePoint now) {
  const json* meta = member(object, "metadata");
  const json* status = member(object, "status");
  const std::int64_t generation = std::max<std::int64_t>(0, integerOf(meta, "generation"));
  const CapacityRequestCondition& want = verdict.condition;
  json conditions = json::array();
  const json* old = nullptr;
  if (const json* list = status != nullptr ? member(*status, "conditions") : nullptr;
      list != nullptr && list->is_array()) {
    for (const json& c : *list) {
      if (stringOf(c, "type") == want.type) {
        old = &c;
      } else {
        conditions.push_back(c);
      }
    }
  }
  const bool same = old != nullptr && stringOf(*old, "status") == want.status &&
                    stringOf(*old, "reason") == want.reason &&
                    stringOf(*old, "message") == want.message &&
                    integerOf(status, "observedGeneration") == generation &&
                    (!writeGranted || integerOf(status, "grantedReplicas") == verdict.granted);
  if (same) return std::nullopt;
  std::string since = core::formatRfc3339(now);
  if (old != nullptr && stringOf(*old, "status") == want.status &&
      !stringOf(*old, "lastTransitionTime").empty()) {
    since = stringOf(*old, "lastTransitionTime");
  }
  conditions.push_back({{"type", want.type},
                        {"status", want.status},
                        {"reason", want.reason},
                        {"message", want.message},
                        {"lastTransitionTime", since},
                        {"observedGeneration", generation}});
  json patch = {{"status", {{"observedGeneration", generation}, {"conditions", conditions}}}};
  if (writeGranted) patch["status"]["grantedReplicas"] = verdict.granted;
  return patch;
}

CapacityRequestVerdict requestVerdict(const partition::CapacityRequest& request, bool inFlight,
                                      std::string_view why) {
  return partition::capacityRequestVerdict(request.replicas, request.grantedReplicas, inFlight,
                                           false, why);
}

CapacityRequestVerdict unplannedRequestVerdict(int granted, std::string_view why) {
  std::string_view reason = "NotManaged";
  std::string_view message = why;
  const auto colon = why.find(": ");
  if (colon != std::string_view::npos && colon > 0 &&
      std::all_of(why.begin(), why.begin() + static_cast<std::ptrdiff_t>(colon),
                  core::isAsciiAlpha)) {
    reason = why.substr(0, colon);
    message = why.substr(colon + 2);
  }
  return {granted,
          {std::string(partition::kGrantedCondition), "False", std::string(reason),
           std::string(message)}};
}

RequestStatusWriter::RequestStatusWriter(std::shared_ptr<kube::KubeClient> client,
                                         std::shared_ptr<EventRecorder> events,
                                         std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)), events_(std::move(events)), degraded_(std::move(metrics)) {}

void RequestStatusWriter::update(const partition::ClusterSnapshot& snapshot,
                                 const std::vector<partition::WorkloadDemand>& workloads,
                                 const partition::PolicySet& policies, const partition::Plan& plan,
                                 const HpaStateStore& store, TimePoint now) {
  std::set<const partition::HpaState*> planned;
  for (const auto& w : workloads) {
    if (w.hpa == nullptr || !w.hpa->capacityRequest) continue;
    planned.insert(w.hpa);
    const partition::CapacityRequest& cached = *w.hpa->capacityRequest;
    auto record = store.get(w.ns, w.name, w.hpa->uid);
    const bool inFlight = record && record->intent;
    std::string why;
    for (const auto& y : plan.why) {
      if (y.ns == w.ns && y.name == w.name) why = partition::whyVerdict(y);
    }
    if (says(cached, requestVerdict(cached, inFlight, why))) {
      degraded_.cleared("request_status", w.ns + "/" + cached.meta.name);
      continue;
    }
    write(
        w.ns, cached.meta.name, cached.meta.uid,
        [&](const json& object) {
          auto fresh = partition::readCapacityRequest(object);
          if (!fresh) return partition::invalidCapacityRequest(fresh.status().message());
          return requestVerdict(*fresh, inFlight, why);
        },
        false, now);
  }
  // Requests the planner never sees: why, once per change of it.
  for (const auto& hpa : snapshot.hpas) {
    if (!hpa.capacityRequest || planned.contains(&hpa)) continue;
    const std::string why = outsideThePlanner(hpa, snapshot, policies, {});
    if (why.empty()) continue;
    const partition::CapacityRequest& cached = *hpa.capacityRequest;
    if (says(cached, unplannedRequestVerdict(cached.grantedReplicas, why))) continue;
    write(
        hpa.ns, cached.meta.name, cached.meta.uid,
        [&](const json& object) {
          auto fresh = partition::readCapacityRequest(object);
          if (!fresh) return partition::invalidCapacityRequest(fresh.status().message());
          return unplannedRequestVerdict(fresh->grantedReplicas, why);
        },
        false, now);
  }
  std::set<std::string> answered;
  for (const auto& s : snapshot.skipped) {
    if (s.kind != partition::kCapacityRequestKind || s.name.empty()) continue;
    std::string key = s.uid + "\x1f" + s.message;
    if (!answeredInvalid_.contains(key)) {
      write(
          s.ns, s.name, s.uid,
          [&](const json&) { return partition::invalidCapacityRequest(s.message); }, true, now);
    }
    answered.insert(std::move(key));
  }
  answeredInvalid_ = std::move(answered);
}

void RequestStatusWriter::write(const std::string& ns, const std::string& name,
                                const std::string& uid,
                                const std::function<CapacityRequestVerdict(const json&)>& verdict,
                                bool writeGranted, TimePoint now) {
  const std::string object = ns + "/" + name;
  std::string oldReason;
  CapacityRequestVerdict written;
  auto r = patchWithRetry(*client_, capacityRequestStatusRef(ns, name),
                          [&](const json& current) -> core::Result<std::optional<json>> {
                            if (actuator_detail::uidOf(current) != uid)
                              return std::optional<json>{};
                            written = verdict(current);
                            oldReason.clear();
                            if (const json* status = member(current, "status")) {
                              if (const json* list = member(*status, "conditions");
                                  list && list->is_array()) {
                                for (const json& c : *list) {
                                  if (stringOf(c, "type") == written.condition.type)
                                    oldReason = stringOf(c, "reason");
                                }
                              }
                            }
                            return requestStatusPatch(current, written, writeGranted, now);
                          });
  if (!r) {
    degraded_.failed("request_status", object,
                     "GPUCapacityRequest status: " + r.status().message());
    return;
  }
  degraded_.cleared("request_status", object);
  if (!r->changed || oldReason == written.condition.reason) return;
  const bool granted = written.condition.status == "True";
  events_->record(demandEventTarget(ns, partition::capacityRequestHpaName(name), uid), false,
                  granted ? "Granted" : "Blocked",
                  granted
                      ? written.condition.message
                      : fmt::format("{}: {}", written.condition.reason, written.condition.message));
}

}  // namespace gpuscale::reconciler
