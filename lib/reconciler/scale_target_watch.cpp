#include "gpuscale/reconciler/scale_target_watch.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/partition/read_fields.h"

namespace gpuscale::reconciler {
namespace {

using kube::Object;

std::string groupOf(const std::string& apiVersion) {
  const auto slash = apiVersion.find('/');
  return slash == std::string::npos ? "" : apiVersion.substr(0, slash);
}

// One HPA's scale target, as its spec.scaleTargetRef names it.
struct TargetRef {
  std::string ns, name, uid, apiVersion, kind;
};

TargetRef scaleTargetOf(const Object& hpa) {
  const Object& meta = k8s::objectField(hpa, "metadata");
  const Object& ref = k8s::objectField(k8s::objectField(hpa, "spec"), "scaleTargetRef");
  TargetRef t{k8s::stringField(meta, "namespace"), k8s::stringField(meta, "name"),
              k8s::stringField(meta, "uid"), k8s::stringField(ref, "apiVersion"),
              k8s::stringField(ref, "kind")};
  if (t.ns.empty()) t.ns = "default";
  return t;
}

// Whether the controller reads `t`'s kind itself. An HPA without an apiVersion is taken at its
// kind's word (the snapshot pairs targets by kind and name).
bool ownKind(const std::set<std::string>& ownKinds, const TargetRef& t) {
  if (!t.apiVersion.empty()) return ownKinds.contains(groupOf(t.apiVersion) + "/" + t.kind);
  return std::any_of(ownKinds.begin(), ownKinds.end(),
                     [&](const std::string& k) { return k.ends_with("/" + t.kind); });
}

std::string skipReason(const core::Status& status) {
  if (status.httpCode() == 404) return "target_not_served";
  if (status.httpCode() == 422) return "target_not_scalable";
  return "target_discovery_failed";
}

// What the snapshot reads of a Scale (partition/kube_objects.h: readScale).
Object trimScale(Object scale) {
  Object out{{"apiVersion", "autoscaling/v1"}, {"kind", "Scale"}};
  for (const char* key : {"metadata", "spec", "status"}) {
    if (scale.is_object() && scale.contains(key)) out[key] = std::move(scale[key]);
  }
  return partition::keepReadFields("Scale", std::move(out));
}

}  // namespace

core::Result<ScalableKind> resolveScalableKind(kube::KubeClient& client,
                                               const std::string& apiVersion,
                                               const std::string& kind) {
  const std::string group = groupOf(apiVersion);
  const std::string version = group.empty() ? apiVersion : apiVersion.substr(group.size() + 1);
  if (version.empty() || (group.empty() && apiVersion != "v1")) {
    return core::Status::notFound(
        fmt::format("the API server serves no apiVersion {}", apiVersion));
  }
  auto doc = client.getPath(group.empty() ? "/api/v1" : "/apis/" + apiVersion);
  if (!doc) {
    if (k8s::isNotFound(doc.status())) {
      return core::Status::notFound(
          fmt::format("the API server serves no apiVersion {}", apiVersion));
    }
    return doc.status().withContext("discovery of " + apiVersion);
  }
  std::set<std::string> names;
  const Object* found = nullptr;
  if (auto resources = doc->find("resources"); resources != doc->end() && resources->is_array()) {
    for (const auto& r : *resources) {
      if (!r.is_object()) continue;
      const std::string name = k8s::stringField(r, "name");
      names.insert(name);
      if (found == nullptr && k8s::stringField(r, "kind") == kind &&
          name.find('/') == std::string::npos) {
        found = &r;
      }
    }
  }
  if (found == nullptr) {
    return core::Status::notFound(fmt::format("{} has no kind {}", apiVersion, kind));
  }
  ScalableKind out{group, version, kind, k8s::stringField(*found, "name")};
  const std::string resource = group.empty() ? out.resource : out.resource + "." + group;
  if (!k8s::boolField(*found, "namespaced", false)) {
    return core::Status::invalid(fmt::format(
        "{} is cluster-scoped: an HPA scales a workload in its own namespace", resource));
  }
  if (!names.contains(out.resource + "/scale")) {
    return core::Status::invalid(fmt::format("{} has no /scale subresource", resource));
  }
  return out;
}

core::Result<std::vector<partition::SkippedObject>> listScaleTargets(
    kube::KubeClient& client, const std::set<std::string>& ownKinds, nlohmann::json& items) {
  std::map<std::string, std::vector<TargetRef>> kinds;  // "<apiVersion> <Kind>"
  for (const auto& item : items) {
    if (k8s::stringField(item, "kind") != "HorizontalPodAutoscaler") continue;
    TargetRef t = scaleTargetOf(item);
    if (t.kind.empty() || t.name.empty() || ownKind(ownKinds, t)) continue;
    kinds[t.apiVersion + " " + t.kind].push_back(std::move(t));
  }
  std::vector<partition::SkippedObject> skipped;
  for (const auto& [key, refs] : kinds) {
    const TargetRef& first = refs.front();
    auto resolved = resolveScalableKind(client, first.apiVersion, first.kind);
    if (!resolved) {
      for (const auto& t : refs) {
        skipped.push_back({"HorizontalPodAutoscaler", t.ns, t.name, t.uid,
                           skipReason(resolved.status()),
                           fmt::format("its scale target kind {} ({}) cannot be read: {}", t.kind,
                                       t.apiVersion, resolved.status().message())});
      }
      continue;
    }
    const auto collection =
        kube::ResourceRef::collection(resolved->group, resolved->version, resolved->resource);
    auto list = client.list(collection, {});
    if (!list) return list.status().withContext("listing " + resolved->resource);
    for (auto& workload : list->items) {
      workload["kind"] = first.kind;
      items.push_back(std::move(workload));
    }
    for (const auto& t : refs) {
      auto ref = collection.inNamespace(t.ns).named(t.name);
      ref.subresource = "scale";
      if (auto scale = client.get(ref)) items.push_back(trimScale(std::move(*scale)));
    }
  }
  return skipped;
}

struct ScaleTargetWatch::KindWatch {
  ScalableKind target;
  std::mutex mu;
  std::set<std::string> changed;  // "ns/name" of workloads whose Scale is to be read; mu
  std::map<std::string, kube::ObjectStore::Ptr> scales;  // "ns/name" -> Scale; loop thread
  std::map<std::string, TimePoint> retryAt;              // Scale GETs that failed; loop thread
  std::unique_ptr<kube::Informer> informer;              // last: stopped before the rest goes

  ~KindWatch() {
    if (informer) informer->stop();
  }
  void mark(const Object& workload) {
    std::lock_guard lock(mu);
    changed.insert(kube::ObjectStore::keyOf(workload));
  }
};

ScaleTargetWatch::ScaleTargetWatch(std::shared_ptr<kube::KubeClient> client,
                                   ScaleTargetWatchOptions options, std::function<void()> onChange)
    : client_(std::move(client)), options_(std::move(options)), onChange_(std::move(onChange)) {}

ScaleTargetWatch::~ScaleTargetWatch() { stop(); }

void ScaleTargetWatch::stop() { watches_.clear(); }

ScaleTargetWatch::KindWatch* ScaleTargetWatch::watchFor(const std::string& groupKind,
                                                        const std::string& apiVersion,
                                                        const std::string& kind, TimePoint now,
                                                        std::string& reason, std::string& why) {
  if (auto it = watches_.find(groupKind); it != watches_.end()) return it->second.get();
  Resolution& r = resolved_[apiVersion + " " + kind];
  if (r.askedAt == TimePoint{} || (!r.kind.ok() && now - r.askedAt >= options_.retryAfter)) {
    r.kind = resolveScalableKind(*client_, apiVersion, kind);
    r.askedAt = now;
    ++discoveries_;
  }
  if (!r.kind) {
    reason = skipReason(r.kind.status());
    why = fmt::format("its scale target kind {} ({}) cannot be read: {}", kind, apiVersion,
                      r.kind.status().message());
    return nullptr;
  }
  auto watch = std::make_unique<KindWatch>();
  watch->target = *r.kind;
  kube::InformerOptions o;
  o.resource = kube::ResourceRef::collection(r.kind->group, r.kind->version, r.kind->resource);
  if (options_.trimCachedObjects) {
    o.transform = [kind](Object object) {
      return partition::keepScalableWorkloadFields(kind, std::move(object));
    };
  }
  watch->informer = std::make_unique<kube::Informer>(client_, o);
  KindWatch* w = watch.get();
  auto changed = [this, w](const Object& object) {
    w->mark(object);
    if (onChange_) onChange_();
  };
  watch->informer->addHandler(
      {changed, [changed](const Object&, const Object& after) { changed(after); }, changed});
  spdlog::info("watching {}.{} ({}): HPAs scale it through /scale", r.kind->resource, r.kind->group,
               kind);
  watch->informer->start();
  return watches_.emplace(groupKind, std::move(watch)).first->second.get();
}

void ScaleTargetWatch::update(const std::vector<kube::ObjectStore::Ptr>& hpas, TimePoint now) {
  // Per kind ("<group>/<Kind>"), the apiVersion to watch it at (the smallest an HPA names, so the
  // choice does not depend on the cache's order) and its HPAs.
  std::map<std::string, std::pair<std::string, std::vector<TargetRef>>> kinds;
  for (const auto& hpa : hpas) {
    TargetRef t = scaleTargetOf(*hpa);
    if (t.kind.empty() || t.name.empty() || ownKind(options_.ownKinds, t)) continue;
    const std::string groupKind = groupOf(t.apiVersion) + "/" + t.kind;
    auto& [apiVersion, refs] = kinds[groupKind];
    if (apiVersion.empty() || t.apiVersion < apiVersion) apiVersion = t.apiVersion;
    refs.push_back(std::move(t));
  }
  skipped_.clear();
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (kinds.contains(it->first)) {
      ++it;
      continue;
    }
    spdlog::info("no HPA scales {} any more: its informer stops", it->first);
    it = watches_.erase(it);
  }
  for (auto& [groupKind, entry] : kinds) {
    auto& [apiVersion, refs] = entry;
    std::string reason, why;
    KindWatch* watch = watchFor(groupKind, apiVersion, refs.front().kind, now, reason, why);
    if (watch != nullptr && !watch->informer->hasSynced() &&
        watch->informer->stats().failures > 0) {
      reason = "target_not_listed";
      why = fmt::format(
          "its scale target kind {} cannot be listed (the reconciler needs get, list and watch "
          "on {}.{})",
          refs.front().kind, watch->target.resource, watch->target.group);
    }
    if (!reason.empty()) {
      for (const auto& t : refs) {
        skipped_.push_back({"HorizontalPodAutoscaler", t.ns, t.name, t.uid, reason, why});
      }
    }
    if (watch != nullptr) refreshScales(*watch, now);
  }
}

void ScaleTargetWatch::refreshScales(KindWatch& watch, TimePoint now) {
  std::set<std::string> keys;
  {
    std::lock_guard lock(watch.mu);
    keys.swap(watch.changed);
  }
  for (auto it = watch.retryAt.begin(); it != watch.retryAt.end();) {
    if (now < it->second) {
      ++it;
      continue;
    }
    keys.insert(it->first);
    it = watch.retryAt.erase(it);
  }
  const auto& t = watch.target;
  for (const auto& key : keys) {
    const auto slash = key.find('/');
    const std::string ns = slash == std::string::npos ? "" : key.substr(0, slash);
    const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
    if (!watch.informer->store().get(ns, name)) {
      watch.scales.erase(key);
      watch.retryAt.erase(key);
      continue;
    }
    auto ref = kube::ResourceRef::collection(t.group, t.version, t.resource, ns).named(name);
    ref.subresource = "scale";
    ++scaleGets_;
    auto scale = client_->get(ref);
    if (scale) {
      watch.scales[key] = std::make_shared<const Object>(trimScale(std::move(*scale)));
      continue;
    }
    // A Scale read before stays until one reads again: the workload's last known size.
    spdlog::warn("reading the Scale of {} {}: {} (tried again in {}s)", t.kind, key,
                 scale.status().message(),
                 std::chrono::duration_cast<std::chrono::seconds>(options_.retryAfter).count());
    watch.retryAt[key] = now + options_.retryAfter;
  }
}

void ScaleTargetWatch::collect(std::vector<partition::KubeItem>& items,
                               std::vector<kube::ObjectStore::Ptr>& held) const {
  for (const auto& [groupKind, watch] : watches_) {
    for (auto& ptr : watch->informer->store().all()) {
      items.push_back({watch->target.kind, ptr.get()});
      held.push_back(std::move(ptr));
    }
    for (const auto& [key, scale] : watch->scales) {
      items.push_back({"Scale", scale.get()});
      held.push_back(scale);
    }
  }
}

ScaleTargetWatch::Stats ScaleTargetWatch::stats() const {
  return {discoveries_, scaleGets_, static_cast<int>(watches_.size())};
}

}  // namespace gpuscale::reconciler
