#include "gpuscale/reconciler/hpa_state_store.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "gpuscale/reconciler/optimistic_write.h"

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;

constexpr int kInsufficientStorage = 507;
constexpr std::string_view kFullReason = "StateStoreFull";
// Answered by the change function when there is no ConfigMap and nothing to put in one, so that
// upsertWithRetry does not create an empty one.
constexpr std::string_view kNothingToCreate = "NothingToCreate";

using Data = std::map<std::string, std::string>;

// The ConfigMap's data, or an error when it does not read.
core::Result<Data> dataOf(const kube::Object& configMap) {
  auto cm = partition::readConfigMap(configMap);
  if (!cm) return cm.status();
  return std::move(cm->data);
}

std::size_t bytesOf(const Data& data) {
  std::size_t n = 0;
  for (const auto& [k, v] : data) n += k.size() + v.size();
  return n;
}

// What the entries of namespace `ns`'s HPAs hold: their count and bytes (keys "<ns>.<name>").
struct NamespaceShare {
  int entries = 0;
  std::size_t bytes = 0;
};
NamespaceShare shareOf(const Data& data, std::string_view ns) {
  NamespaceShare share;
  const std::string prefix = std::string(ns) + ".";
  for (auto it = data.lower_bound(prefix); it != data.end() && it->first.starts_with(prefix);
       ++it) {
    ++share.entries;
    share.bytes += it->first.size() + it->second.size();
  }
  return share;
}

}  // namespace

std::string hpaRecordKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "." + std::string(name);
}

std::optional<std::pair<std::string, std::string>> splitHpaRecordKey(std::string_view key) {
  const auto dot = key.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size()) return std::nullopt;
  return std::pair{std::string(key.substr(0, dot)), std::string(key.substr(dot + 1))};
}

std::string encodeHpaRecord(const HpaRecord& record) {
  nlohmann::ordered_json j{{"uid", record.uid}};
  if (record.lastChange) j["lastChange"] = core::formatRfc3339(*record.lastChange);
  if (record.originalMaxReplicas) j["originalMaxReplicas"] = *record.originalMaxReplicas;
  if (record.intent) j["intent"] = json::parse(encodeHpaIntent(*record.intent));
  return j.dump();
}

std::optional<HpaRecord> decodeHpaRecord(std::string_view text) {
  if (text.empty() || text.size() > kMaxIntentBytes) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto read = partition::fields::readFields("", [&]() -> std::optional<HpaRecord> {
    HpaRecord r;
    r.uid = partition::fields::string(j, "uid");
    if (partition::fields::find(j, "uid") == nullptr) return std::nullopt;
    if (partition::fields::find(j, "lastChange") != nullptr) {
      r.lastChange = core::parseRfc3339(partition::fields::string(j, "lastChange"));
      if (!r.lastChange) return std::nullopt;
    }
    if (partition::fields::find(j, "originalMaxReplicas") != nullptr) {
      r.originalMaxReplicas = static_cast<int>(partition::fields::integer(
          j, "originalMaxReplicas", 0, 1, std::numeric_limits<int>::max()));
    }
    if (const json* intent = partition::fields::find(j, "intent")) {
      r.intent = decodeHpaIntent(intent->dump());
      if (!r.intent) return std::nullopt;
    }
    return r;
  });
  return read ? *read : std::nullopt;
}

std::map<std::string, std::string> stateRecordsIn(const nlohmann::json& dump,
                                                  std::string_view name) {
  std::map<std::string, std::string> out;
  auto items = partition::collectKubeItems(dump);
  if (!items) return out;
  for (const auto& item : *items) {
    if (partition::kindOf(*item.object) != "ConfigMap") continue;
    auto cm = partition::readConfigMap(*item.object);
    if (!cm || cm->meta.name != name) continue;
    out.insert(cm->data.begin(), cm->data.end());
  }
  return out;
}

void applyHpaRecords(const std::map<std::string, std::string>& data,
                     partition::ClusterSnapshot& snapshot) {
  for (auto& hpa : snapshot.hpas) {
    std::optional<HpaRecord> record;
    if (auto it = data.find(hpaRecordKey(hpa.ns, hpa.name)); it != data.end()) {
      record = decodeHpaRecord(it->second);
      if (record && record->uid != hpa.uid) record.reset();
    }
    hpa.lastChange = record ? record->lastChange : std::nullopt;
    hpa.originalMaxReplicas = record ? record->originalMaxReplicas : std::nullopt;
    hpa.promisedMaxReplicas =
        record && record->intent ? std::optional<int>(record->intent->to) : std::nullopt;
  }
}

bool isStateStoreFull(const core::Status& status) {
  return status.httpCode() == kInsufficientStorage && status.reason() == kFullReason;
}

HpaStateStore::HpaStateStore(std::shared_ptr<kube::KubeClient> client, StateStoreOptions options,
                             std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)), options_(std::move(options)), degraded_(std::move(metrics)) {}

kube::ResourceRef HpaStateStore::ref() const {
  return kube::ResourceRef::collection("", "v1", "configmaps", options_.ns).named(options_.name);
}

void HpaStateStore::remember(Data data) {
  std::lock_guard lock(mu_);
  data_ = std::move(data);
}

core::Status HpaStateStore::load() {
  auto cm = client_->get(ref());
  if (!cm) {
    if (!k8s::isNotFound(cm.status())) return cm.status();
    std::lock_guard lock(mu_);
    data_.clear();
    return {};
  }
  auto data = dataOf(*cm);
  if (!data) return data.status();
  remember(std::move(*data));
  return {};
}

std::optional<HpaRecord> HpaStateStore::get(std::string_view ns, std::string_view name,
                                            std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = data_.find(hpaRecordKey(ns, name));
  if (it == data_.end()) return std::nullopt;
  auto record = decodeHpaRecord(it->second);
  if (!record || record->uid != uid) return std::nullopt;
  return record;
}

std::map<std::string, std::string> HpaStateStore::records() const {
  std::lock_guard lock(mu_);
  return data_;
}

core::Result<bool> HpaStateStore::update(std::string_view ns, std::string_view name,
                                         std::string_view uid,
                                         const std::function<void(HpaRecord&)>& edit) {
  const std::string key = hpaRecordKey(ns, name);
  bool namespaceFull = false;
  auto r = upsertWithRetry(
      *client_, ref(), "v1", "ConfigMap",
      [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
        namespaceFull = false;
        auto read = dataOf(current);
        if (!read) return read.status();
        Data& data = *read;
        auto it = data.find(key);
        std::optional<HpaRecord> stored;
        if (it != data.end()) stored = decodeHpaRecord(it->second);
        HpaRecord record;
        record.uid = std::string(uid);
        if (stored && stored->uid == uid) record = *stored;
        const HpaRecord before = record;
        edit(record);
        record.uid = std::string(uid);
        const bool existed = it != data.end();
        const bool malformed = existed && !stored;  // replaced (or removed) like a changed one
        if (record == before && !malformed) {
          auto meta = partition::readMeta(current);
          if (meta && !meta->resourceVersion.empty()) return std::optional<kube::Object>{};
          return core::Status(412, std::string(kNothingToCreate), "nothing to record");
        }
        const std::size_t bytesBefore = bytesOf(data);
        const NamespaceShare shareBefore = shareOf(data, ns);
        json value = nullptr;
        if (record.empty()) {
          data.erase(key);
        } else {
          data[key] = encodeHpaRecord(record);
          value = data[key];
        }
        if (!existed && !record.empty() && static_cast<int>(data.size()) > options_.maxEntries) {
          return core::Status(kInsufficientStorage, std::string(kFullReason),
                              fmt::format("the state store {}/{} holds its maximum of {} entries",
                                          options_.ns, options_.name, options_.maxEntries));
        }
        const std::size_t bytesAfter = bytesOf(data);
        if (bytesAfter > options_.maxBytes && bytesAfter > bytesBefore) {
          return core::Status(
              kInsufficientStorage, std::string(kFullReason),
              fmt::format("the state store {}/{} would grow to {} bytes (limit {})", options_.ns,
                          options_.name, bytesAfter, options_.maxBytes));
        }
        // One namespace's share, checked after the store's own caps (a full store is one
        // condition, not one per namespace).
        const NamespaceShare share = shareOf(data, ns);
        if (!existed && !record.empty() && share.entries > options_.maxEntriesPerNamespace) {
          namespaceFull = true;
          return core::Status(
              kInsufficientStorage, std::string(kFullReason),
              fmt::format("the HPAs of namespace {} hold their maximum of {} entries in the state "
                          "store {}/{}",
                          ns, options_.maxEntriesPerNamespace, options_.ns, options_.name));
        }
        if (share.bytes > options_.maxBytesPerNamespace && share.bytes > shareBefore.bytes) {
          namespaceFull = true;
          return core::Status(
              kInsufficientStorage, std::string(kFullReason),
              fmt::format("the HPAs of namespace {} would hold {} bytes of the state store {}/{} "
                          "(limit {})",
                          ns, share.bytes, options_.ns, options_.name,
                          options_.maxBytesPerNamespace));
        }
        return std::optional<kube::Object>(json{{"data", {{key, value}}}});
      });
  if (!r) {
    if (r.status().httpCode() == 412 && r.status().reason() == kNothingToCreate) return false;
    if (isStateStoreFull(r.status())) {
      // One condition for the store, or for the namespace (not one per HPA, which tenants could
      // multiply).
      degraded_.failed(namespaceFull ? "state_store_namespace_full" : "state_store_full",
                       namespaceFull ? std::string(ns) : options_.ns + "/" + options_.name,
                       fmt::format("not recording state for HPA {}/{}, so not changing it: {}", ns,
                                   name, r.status().message()));
    }
    return r.status();
  }
  if (auto data = dataOf(r->object)) remember(std::move(*data));
  bool roomLeft = false;
  bool namespaceRoomLeft = false;
  {
    std::lock_guard lock(mu_);
    roomLeft =
        static_cast<int>(data_.size()) < options_.maxEntries && bytesOf(data_) < options_.maxBytes;
    const NamespaceShare share = shareOf(data_, ns);
    namespaceRoomLeft = share.entries < options_.maxEntriesPerNamespace &&
                        share.bytes < options_.maxBytesPerNamespace;
  }
  if (roomLeft) degraded_.cleared("state_store_full", options_.ns + "/" + options_.name);
  if (namespaceRoomLeft) degraded_.cleared("state_store_namespace_full", std::string(ns));
  return r->changed;
}

core::Status HpaStateStore::prune(
    const std::function<bool(const std::string&, const std::string&, const std::string&)>& keep) {
  auto stale = [&](const std::string& key, const std::string& value) {
    auto hpa = splitHpaRecordKey(key);
    auto record = decodeHpaRecord(value);
    return !hpa || !record || !keep(hpa->first, hpa->second, record->uid);
  };
  {
    // Most passes have nothing to prune: ask the API server only when the last read shows some.
    std::lock_guard lock(mu_);
    if (std::none_of(data_.begin(), data_.end(),
                     [&](const auto& kv) { return stale(kv.first, kv.second); })) {
      return {};
    }
  }
  auto r =
      patchWithRetry(*client_, ref(),
                     [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
                       auto data = dataOf(current);
                       if (!data) return data.status();
                       json removals = json::object();
                       for (const auto& [key, value] : *data) {
                         if (stale(key, value)) removals[key] = nullptr;
                       }
                       if (removals.empty()) return std::optional<kube::Object>{};
                       return std::optional<kube::Object>(json{{"data", removals}});
                     });
  if (!r) return k8s::isNotFound(r.status()) ? core::Status{} : r.status();
  if (auto data = dataOf(r->object)) remember(std::move(*data));
  return {};
}

}  // namespace gpuscale::reconciler
