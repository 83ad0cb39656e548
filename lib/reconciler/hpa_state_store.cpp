#include "gpuscale/reconciler/hpa_state_store.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/status_predicates.h"
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

Data dataOf(const kube::Object& configMap) {
  Data out;
  if (!configMap.contains("data") || !configMap["data"].is_object()) return out;
  for (const auto& [k, v] : configMap["data"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

std::size_t bytesOf(const Data& data) {
  std::size_t n = 0;
  for (const auto& [k, v] : data) n += k.size() + v.size();
  return n;
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
  if (!j.is_object() || !j.contains("uid") || !j["uid"].is_string()) return std::nullopt;
  HpaRecord r;
  r.uid = j["uid"].get<std::string>();
  if (j.contains("lastChange")) {
    if (!j["lastChange"].is_string()) return std::nullopt;
    r.lastChange = core::parseRfc3339(j["lastChange"].get<std::string>());
    if (!r.lastChange) return std::nullopt;
  }
  if (j.contains("originalMaxReplicas")) {
    if (!j["originalMaxReplicas"].is_number_integer()) return std::nullopt;
    const auto v = j["originalMaxReplicas"].get<std::int64_t>();
    if (v < 1 || v > std::numeric_limits<int>::max()) return std::nullopt;
    r.originalMaxReplicas = static_cast<int>(v);
  }
  if (j.contains("intent")) {
    r.intent = decodeHpaIntent(j["intent"].dump());
    if (!r.intent) return std::nullopt;
  }
  return r;
}

namespace {

void collectState(const nlohmann::json& j, std::string_view name,
                  std::map<std::string, std::string>& out) {
  if (j.is_array()) {
    for (const auto& item : j) collectState(item, name, out);
    return;
  }
  if (!j.is_object()) return;
  if (j.contains("items")) {
    collectState(j["items"], name, out);
    return;
  }
  const nlohmann::json* meta = j.contains("metadata") ? &j["metadata"] : nullptr;
  if (j.value("kind", "") != "ConfigMap" || meta == nullptr || !meta->is_object() ||
      meta->value("name", "") != name || !j.contains("data") || !j["data"].is_object()) {
    return;
  }
  for (const auto& [k, v] : j["data"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
}

}  // namespace

std::map<std::string, std::string> stateRecordsIn(const nlohmann::json& dump,
                                                  std::string_view name) {
  std::map<std::string, std::string> out;
  collectState(dump, name, out);
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

void HpaStateStore::remember(const kube::Object& configMap) {
  Data data = dataOf(configMap);
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
  remember(*cm);
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
  auto r = upsertWithRetry(
      *client_, ref(), "v1", "ConfigMap",
      [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
        Data data = dataOf(current);
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
          if (current["metadata"].contains("resourceVersion")) return std::optional<kube::Object>{};
          return core::Status(412, std::string(kNothingToCreate), "nothing to record");
        }
        const std::size_t bytesBefore = bytesOf(data);
        json value = nullptr;
        if (record.empty()) {
          data.erase(key);
        } else {
          value = encodeHpaRecord(record);
          data[key] = value.get<std::string>();
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
        return std::optional<kube::Object>(json{{"data", {{key, value}}}});
      });
  if (!r) {
    if (r.status().httpCode() == 412 && r.status().reason() == kNothingToCreate) return false;
    if (isStateStoreFull(r.status())) {
      // One condition for the store (not one per HPA, which tenants could multiply).
      degraded_.failed("state_store_full", options_.ns + "/" + options_.name,
                       fmt::format("not recording state for HPA {}/{}, so not changing it: {}", ns,
                                   name, r.status().message()));
    }
    return r.status();
  }
  remember(r->object);
  bool roomLeft = false;
  {
    std::lock_guard lock(mu_);
    roomLeft =
        static_cast<int>(data_.size()) < options_.maxEntries && bytesOf(data_) < options_.maxBytes;
  }
  if (roomLeft) degraded_.cleared("state_store_full", options_.ns + "/" + options_.name);
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
                       json removals = json::object();
                       for (const auto& [key, value] : dataOf(current)) {
                         if (stale(key, value)) removals[key] = nullptr;
                       }
                       if (removals.empty()) return std::optional<kube::Object>{};
                       return std::optional<kube::Object>(json{{"data", removals}});
                     });
  if (!r) return k8s::isNotFound(r.status()) ? core::Status{} : r.status();
  remember(r->object);
  return {};
}

}  // namespace gpuscale::reconciler
