#include "gpuscale/reconciler/controller.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ceiling_holder.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/read_fields.h"
#include "gpuscale/reconciler/intent.h"
#include "gpuscale/reconciler/optimistic_write.h"
#include "gpuscale/reconciler/pass.h"
#include "gpuscale/reconciler/request_status.h"

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;

constexpr WatchedResource kWatched[] = {
    {"Node", "", "v1", "nodes", false, false},
    {"Pod", "", "v1", "pods", false, false},
    {"HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", false, false},
    {"Deployment", "apps", "v1", "deployments", false, false},
    {"StatefulSet", "apps", "v1", "statefulsets", false, false},
    {"ConfigMap", "", "v1", "configmaps", true, false},
    // DRA (GA in 1.34): planned without where the cluster does not serve it.
    {"ResourceSlice", "resource.k8s.io", "v1", "resourceslices", false, true},
    {"DeviceClass", "resource.k8s.io", "v1", "deviceclasses", false, true},
    {"ResourceClaimTemplate", "resource.k8s.io", "v1", "resourceclaimtemplates", false, true},
    {"ResourceClaim", "resource.k8s.io", "v1", "resourceclaims", false, true},
    // A CRD that may not be installed: planned without requests while it is not.
    {"GPUCapacityRequest", "gpuscale.io", "v1alpha1", "gpucapacityrequests", false, true},
};

}  // namespace

std::span<const WatchedResource> watchedResources() { return kWatched; }

Controller::Controller(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<Actuator> actuator,
                       std::shared_ptr<PolicySource> policies,
                       std::shared_ptr<EventRecorder> events,
                       std::shared_ptr<ReconcilerMetrics> metrics, ControllerOptions options,
                       std::shared_ptr<GpuPodMapping> gpuPods,
                       std::shared_ptr<RetriedWrites> retried)
    : client_(std::move(client)),
      actuator_(std::move(actuator)),
      policies_(std::move(policies)),
      events_(std::move(events)),
      metrics_(std::move(metrics)),
      options_(std::move(options)),
      gpuPods_(std::move(gpuPods)),
      retried_(std::move(retried)),
      degraded_(metrics_),
      store_(std::make_unique<HpaStateStore>(client_, options_.state, metrics_)),
      requests_(std::make_unique<RequestStatusWriter>(client_, events_, metrics_)) {}

Controller::~Controller() { stop(); }

void Controller::start(std::function<bool()> isLeader) {
  isLeader_ = std::move(isLeader);
  auto poke = [this](const kube::Object&) { trigger(); };
  const kube::InformerHandler handler{
      poke, [this](const kube::Object&, const kube::Object&) { trigger(); }, poke};
  for (const auto& w : kWatched) {
    kube::InformerOptions o;
    o.resource = kube::ResourceRef::collection(
        w.group, w.version, w.resource, w.operatorNamespaceOnly ? options_.operatorNamespace : "");
    const std::string kind = w.kind;
    const bool pods = kind == "Pod";
    // Pods, Nodes, HPAs and workloads are read once per change into their caches; the store keeps
    // only their identity, except HPAs' (trimmed) JSON, which the scale-target watch reads too.
    const StoreKeeps keeps = !options_.trimCachedObjects || kind == "HorizontalPodAutoscaler"
                                 ? StoreKeeps::kObject
                                 : StoreKeeps::kIdentity;
    ReadCache<partition::ObjectRecord>* records = nullptr;
    if (!pods && partition::readsAsRecord(kind)) {
      records = records_
                    .emplace(kind, std::make_unique<ReadCache<partition::ObjectRecord>>(
                                       [kind](const kube::Object& object) {
                                         return partition::readObjectRecord(kind, object);
                                       }))
                    .first->second.get();
    }
    if (pods) {
      o.transform = pods_.transform(keeps);
    } else if (options_.trimCachedObjects) {
      o.transform = [kind,
                     cached = records ? records->transform(keeps) : nullptr](kube::Object object) {
        object = partition::keepReadFields(kind, std::move(object));
        return cached ? cached(std::move(object)) : object;
      };
    } else if (records != nullptr) {
      o.transform = records->transform(keeps);
    }
    if (w.optional) {
      watchOptional(w.kind, std::move(o), handler);
      continue;
    }
    auto informer = std::make_unique<kube::Informer>(client_, o);
    // Before the pass trigger below: the pass it triggers must not find a deleted record.
    if (pods) informer->addHandler(pods_.handler());
    if (records != nullptr) informer->addHandler(records->handler());
    informer->addHandler(handler);
    informer->start();
    informers_.emplace_back(w.kind, std::move(informer));
  }
  ScaleTargetWatchOptions scalable;
  for (const auto& w : kWatched) scalable.ownKinds.insert(std::string(w.group) + "/" + w.kind);
  scalable.trimCachedObjects = options_.trimCachedObjects;
  scaleTargets_ = std::make_unique<ScaleTargetWatch>(client_, scalable, [this] { trigger(); });
  loop_ = std::jthread([this](std::stop_token stop) { loop(stop); });
}

void Controller::watchOptional(std::string kind, kube::InformerOptions informer,
                               kube::InformerHandler handler) {
  OptionalInformerOptions o;
  o.kind = std::move(kind);
  o.informer = std::move(informer);
  o.handler = std::move(handler);
  o.recheckPeriod = options_.optionalRecheckPeriod;
  o.onChange = [this] { trigger(); };
  optional_.push_back(std::make_unique<OptionalInformer>(client_, std::move(o), metrics_));
  optional_.back()->start();
}

void Controller::stop() {
  if (loop_.joinable()) {
    loop_.request_stop();
    cv_.notify_all();
    loop_.join();
  }
  for (auto& [_, informer] : informers_) informer->stop();
  for (auto& optional : optional_) optional->stop();
  if (scaleTargets_) scaleTargets_->stop();
}

bool Controller::synced() const {
  for (const auto& [_, informer] : informers_) {
    if (!informer->hasSynced()) return false;
  }
  for (const auto& optional : optional_) {
    if (!optional->ready()) return false;
  }
  return !informers_.empty();
}

void Controller::trigger() {
  {
    std::lock_guard lock(mu_);
    dirty_ = true;
  }
  cv_.notify_all();
}

std::string Controller::lastPlanJson() const {
  std::lock_guard lock(mu_);
  return lastPlanJson_;
}

void Controller::loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, stop, options_.resyncPeriod, [this] { return dirty_; });
      if (stop.stop_requested()) return;
      dirty_ = false;
    }
    policies_->reloadIfChanged();
    if (const uint64_t reloads = policies_->reloads(); reloads != seenReloads_) {
      metrics_->configReloads(static_cast<int>(reloads - seenReloads_),
                              policies_->lastReloadSuccessful());
      seenReloads_ = reloads;
    }
    const bool leader = isLeader_ && isLeader_();
    metrics_->leader(leader);
    if (!leader || !synced()) {
      metrics_->reconcile("skipped");
    } else {
      const auto started = std::chrono::steady_clock::now();
      auto r = passFromCaches(std::chrono::system_clock::now());
      const std::string result = r.error.empty() ? "ok" : "error";
      metrics_->reconcile(result);
      metrics_->passDuration(
          result,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      // An operation in flight waits for the operator, a settling mapping for the metrics: look
      // again soon even without events.
      if (r.report.nodesInFlight > 0 || r.nodesSettling > 0) trigger();
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, stop, options_.minPassInterval, [] { return false; });
  }
}

PassResult Controller::passFromCaches(TimePoint now) {
  // The items point into the informers' stores; `held` keeps each object alive for the pass even
  // if an event replaces it in the store meanwhile. The typed snapshot is the pass's only copy.
  std::vector<kube::ObjectStore::Ptr> held;
  std::vector<partition::KubeItem> items;
  // Pods come read already (pod_cache.h); the items (then the snapshot) share their records.
  for (auto& pod : pods_.records()) items.push_back({"Pod", nullptr, std::move(pod)});
  for (const auto& [kind, informer] : informers_) {
    if (kind == "Pod") continue;
    const auto cached = records_.find(kind);
    if (cached != records_.end()) {
      for (auto& record : cached->second->records()) {
        items.push_back({kind, nullptr, nullptr, std::move(record)});
      }
    }
    if (scaleTargets_ && kind == "HorizontalPodAutoscaler") {
      scaleTargets_->update(informer->store().all(), now);
    }
    if (cached != records_.end()) continue;
    auto objects = informer->store().all();
    for (auto& ptr : objects) {
      items.push_back({kind, ptr.get()});
      held.push_back(std::move(ptr));
    }
  }
  for (const auto& optional : optional_) {
    for (auto& ptr : optional->objects()) {
      items.push_back({optional->kind(), ptr.get()});
      held.push_back(std::move(ptr));
    }
  }
  if (scaleTargets_) scaleTargets_->collect(items, held);
  return passOver(items, now);
}

PassResult Controller::pass(const std::vector<kube::Object>& objects, TimePoint now) {
  std::vector<partition::KubeItem> items;
  items.reserve(objects.size());
  for (const auto& o : objects) items.push_back({{}, &o});
  return passOver(items, now);
}

PassResult Controller::passOver(const std::vector<partition::KubeItem>& items, TimePoint now) {
  PassResult result;
  // The HPA-side state comes from the reconciler's own store, never from the HPAs' annotations;
  // without it no pass acts (it could not honour cooldowns or in-flight raises).
  const std::string storeName = options_.state.ns + "/" + options_.state.name;
  if (auto s = store_->load(); !s.ok()) {
    result.error = "reading the state store " + storeName + ": " + s.message();
    degraded_.failed("state_store", storeName, result.error);
    return result;
  }
  degraded_.cleared("state_store", storeName);
  auto policies = policies_->current();
  PassInputs in;
  in.policies = policies.get();
  in.stateRecords = store_->records();
  in.history = &history_;
  in.leadTimes = leadTimes_;
  in.gpuPods = gpuPods_.get();
  in.now = now;
  auto pass = runPass(items, in);
  if (!pass) {
    result.error = pass.status().message();
    degraded_.failed("snapshot", "cluster", result.error);
    return result;
  }
  degraded_.cleared("snapshot", "cluster");
  if (scaleTargets_ && !scaleTargets_->skipped().empty()) {
    auto skipped = pass->snapshot.skipped;
    skipped.insert(skipped.end(), scaleTargets_->skipped().begin(), scaleTargets_->skipped().end());
    reportSkipped(skipped);
  } else {
    reportSkipped(pass->snapshot.skipped);
  }
  checkPolicyScope(pass->snapshot, *policies);
  history_.record(pass->workloads, now);
  result.plan = std::move(pass->plan);  // the pass is done with it
  result.planned = true;
  result.nodesSettling = pass->nodesSettling;
  bool explainChanged = false;
  const std::string planJson = partition::planToJson(result.plan).dump();
  {
    std::lock_guard lock(mu_);
    // A contended plan may change nothing (a lower priority gets no raise): its explanations
    // are still news for the HPAs it turned down.
    const bool explained = std::any_of(result.plan.demands.begin(), result.plan.demands.end(),
                                       [](const auto& d) { return !d.explain.empty(); });
    if (planJson != lastPlanJson_ && (!result.plan.actions.empty() || explained)) {
      spdlog::info("{}plan: {}", options_.dryRun ? "dry run, not applied: " : "", planJson);
      explainChanged = !options_.dryRun;
    }
    lastPlanJson_ = planJson;
  }
  if (options_.dryRun) return result;
  if (explainChanged) recordExplanations(result.plan);
  if (!options_.observe) pruneState(pass->snapshot, *policies);
  ClusterState state;
  state.snapshot = &pass->snapshot;
  state.workloads = &pass->workloads;
  state.nodesWithIntent = pass->nodesWithIntent;
  state.hpasWithIntent = pass->hpasWithIntent;
  state.store = store_.get();
  result.report = actuator_->apply(result.plan, state, now);
  for (const auto& o : result.report.outcomes) {
    metrics_->action(std::string(actionKindName(o.kind)), std::string(outcomeName(o.outcome)));
  }
  for (const auto& cause : result.report.stalls) metrics_->nodeStall(cause);
  for (double s : result.report.ceilingToCapacitySeconds) metrics_->ceilingToCapacity(s);
  for (const auto& t : result.report.leverSeconds) leadTimes_.record(t.lever, t.node, t.seconds);
  metrics_->nodesInFlight(result.report.nodesInFlight);
  if (!options_.observe) {
    updateHpaStatus(pass->workloads, pass->snapshot, now);
    requests_->update(pass->snapshot, pass->workloads, *policies, result.plan, *store_, now);
  }
  if (retried_) retried_->flush(*events_);
  return result;
}

void Controller::recordExplanations(const partition::Plan& plan) {
  std::map<std::string, std::string> explained;
  for (const auto& d : plan.demands) {
    if (d.explain.empty()) continue;
    const std::string key = d.ns + "/" + d.name;
    explained[key] = d.explain;
    // The same explanation with another number of replicas wanted is no news.
    if (auto it = explained_.find(key); it != explained_.end() && it->second == d.explain) continue;
    const bool anticipated = d.reason == partition::BlockReason::kAnticipated;
    events_->record(demandEventTarget(d.ns, d.name), false,
                    anticipated ? "CeilingAnticipated" : "CapacityShared",
                    fmt::format("{} pods of {} fit the GPU partitions, planning for {}: {}",
                                d.ceiling, d.resource, d.wanted, d.explain));
  }
  explained_ = std::move(explained);
}

void Controller::checkPolicyScope(const partition::ClusterSnapshot& snapshot,
                                  const partition::PolicySet& policies) {
  // Rebuilt every pass from the HPAs that exist, so HPAs created and deleted by tenants never
  // accumulate here.
  std::set<std::string> ignored;
  for (const auto& hpa : snapshot.hpas) {
    const auto m = policies.match(hpa.ns, hpa.name, hpa.labels, hpa.annotations);
    if (m.ignored.empty()) continue;
    const std::string object = hpa.ns + "/" + hpa.name;
    std::string key = object + "=" + m.ignored;
    if (!ignoredAnnotations_.contains(key)) {
      spdlog::warn("ignoring {}={} on HPA {}: the policy {}", k8s::kPolicyAnnotation, m.ignored,
                   object, m.ignoredWhy);
      metrics_->policyAnnotationIgnored();
    }
    ignored.insert(std::move(key));
  }
  metrics_->policyAnnotationsIgnoredNow(static_cast<int>(ignored.size()));
  ignoredAnnotations_ = std::move(ignored);
}

void Controller::reportSkipped(const std::vector<partition::SkippedObject>& skipped) {
  std::set<std::string> now;
  for (const auto& s : skipped) {
    std::string key = s.kind + "/" + s.ns + "/" + s.name + "/" + s.uid + "\x1f" + s.message;
    if (!skipped_.contains(key)) {
      const std::string object = s.ns.empty() ? s.name : s.ns + "/" + s.name;
      spdlog::warn("skipping {} {}: {} (planned as if absent)", s.kind, object, s.message);
      metrics_->objectSkipped(s.kind, s.reason);
      std::string apiVersion = s.kind == "ReplicaSet" ? "apps/v1" : "v1";
      for (const auto& w : kWatched) {
        if (s.kind == w.kind) {
          apiVersion =
              std::string(w.group).empty() ? w.version : std::string(w.group) + "/" + w.version;
        }
      }
      if (!s.name.empty()) {
        events_->record(EventTarget{s.kind, apiVersion, s.ns, s.name, s.uid}, true, "ObjectSkipped",
                        "gpuscale-reconciler cannot read this object and plans as if it were "
                        "absent: " +
                            s.message);
      }
    }
    now.insert(std::move(key));
  }
  skipped_ = std::move(now);
}

void Controller::pruneState(const partition::ClusterSnapshot& snapshot,
                            const partition::PolicySet& policies) {
  const std::string storeName = options_.state.ns + "/" + options_.state.name;
  auto s =
      store_->prune([&](const std::string& ns, const std::string& name, const std::string& uid) {
        const partition::HpaState* hpa = snapshot.hpa(ns, name);
        return hpa != nullptr && hpa->uid == uid &&
               policies.forHpa(ns, name, hpa->labels, hpa->annotations) != nullptr;
      });
  if (!s.ok()) {
    degraded_.failed("state_store_prune", storeName, "pruning the state store: " + s.message());
  } else {
    degraded_.cleared("state_store_prune", storeName);
  }
}

void Controller::updateHpaStatus(const std::vector<partition::WorkloadDemand>& workloads,
                                 const partition::ClusterSnapshot& snapshot, TimePoint now) {
  for (const auto& w : workloads) {
    const partition::HpaState* hpa = snapshot.hpa(w.ns, w.name);
    // A request's status is its own (request_status.h): no HPA carries it.
    if (hpa == nullptr || hpa->capacityRequest) continue;
    // The annotation lives on the object that holds the ceiling (CeilingRef::annotatesInPatch).
    const CeilingRef holder = ceilingRefOf(*hpa);
    const bool onScaledObject = holder.holder == CeilingHolder::kScaledObject;
    const std::string object = w.ns + "/" + w.name;
    if (onScaledObject && !hpa->ceilingHolder) {
      // Without the ScaledObject in the cache its annotation is unknown: writing would cost a GET
      // every pass. It is written once the informer holds it.
      degraded_.failed("hpa_status", object,
                       "status annotation: the ScaledObject " + hpa->controller->name +
                           " holding the ceiling is not in the cache (keda.sh not served or "
                           "not readable)");
      continue;
    }
    auto old = decodeHpaStatus(onScaledObject ? hpa->ceilingHolder->status
                                              : hpa->annotation(k8s::kStatusAnnotation));
    std::string reason =
        w.blocked ? fmt::format("at partition ceiling ({})", partition::blockReasonName(w.reason))
                  : "within partition ceiling";
    // A ceiling another object holds (a KEDA ScaledObject) is named: that is where it changes.
    if (hpa->ownedByScaledObject()) reason += "; ceiling held by " + hpa->ceilingField();
    if (old && old->ceiling == w.ceiling && old->reason == reason) {
      degraded_.cleared("hpa_status", object);
      continue;
    }
    HpaStatus status{w.ceiling, old ? old->lastAction : "none", reason, now};
    auto r = patchWithRetry(
        *client_, holder.ref,
        [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
          auto meta = partition::readMeta(current);
          if (!meta) return meta.status();
          if (onScaledObject && !holder.uid.empty() && meta->uid != holder.uid) {
            return std::optional<kube::Object>{};  // another ScaledObject of that name
          }
          auto now2 = decodeHpaStatus(meta->annotation(k8s::kStatusAnnotation));
          if (now2 && now2->ceiling == w.ceiling && now2->reason == reason) {
            return std::optional<kube::Object>{};
          }
          if (now2) status.lastAction = now2->lastAction;
          return std::optional<kube::Object>(json{{"metadata", statusAnnotationMetadata(status)}});
        });
    if (!r) {
      degraded_.failed("hpa_status", object, "status annotation: " + r.status().message());
      continue;
    }
    degraded_.cleared("hpa_status", object);
    // An anticipated demand has its own Event, with the prediction (recordExplanations).
    if (r->changed && w.blocked && w.reason != partition::BlockReason::kAnticipated) {
      events_->record(
          EventTarget::hpa(w.ns, w.name), false, "AtPartitionCeiling",
          fmt::format("{} replicas of {} fit the GPU partitions; the HPA wants {} ({}); the "
                      "ceiling is {}",
                      w.ceiling, w.resource, w.wanted, partition::blockReasonName(w.reason),
                      hpa->ceilingField()));
    }
  }
}

}  // namespace gpuscale::reconciler
