// The state the reconciler keeps per managed HPA, where tenants cannot write it: one ConfigMap
// (default `gpuscale-reconciler-state`) in the reconciler's own namespace, which only the
// reconciler's ServiceAccount (and cluster admins) may change.
//
// Why not on the HPA: whoever may edit an HPA (a tenant) may edit its annotations, and state read
// back from there would let a tenant skip cooldowns (a last-change in the past), keep isolation
// from ever coming back (an original maxReplicas far above the real one), or send the reconciler
// to nodes of its choosing (an intent naming them). The HPA keeps only an informational status
// annotation, never read back to decide anything.
//
// One entry per HPA, in the ConfigMap's data:
//   key    "<namespace>.<name>" (a namespace name has no dot, so the first dot splits the key)
//   value  {"uid","lastChange","originalMaxReplicas","intent":{"plan","from","to","nodes",
//           "started"}}   (compact JSON; absent fields are omitted)
// An entry belongs to the HPA with that uid: a deleted and recreated HPA of the same name does
// not inherit it (get() answers nothing, prune() removes it). Entries are written only for HPAs a
// policy admits, and prune() drops those whose HPA is gone, was recreated or is no longer managed.
//
// Bounds: at most `maxEntries` entries and `maxBytes` of keys plus values (a ConfigMap holds at
// most 1 MiB), and per namespace at most `maxEntriesPerNamespace` entries and
// `maxBytesPerNamespace` bytes of its HPAs' entries, so that the HPAs of one namespace cannot fill
// the store for the others. A write that would add an entry beyond a cap, or grow the data (or the
// namespace's share) beyond its bytes, is refused with 507 StateStoreFull, logged once and counted
// (gpuscale_reconciler_degraded_total{what="state_store_full"} for the store,
// what="state_store_namespace_full" once per namespace); the caller then makes no change it could
// not record. Shrinking writes (clearing an intent, pruning) are always allowed.
//
// Writes are read-modify-write merge patches through upsertWithRetry (optimistic_write.h), so a
// concurrent writer costs a 409 and a retry, and go through whatever client the store was given
// (the reconciler's fenced, retry-noting client: only the leader writes).
//
// Thread safety: all members are thread-safe; load() replaces what get() answers.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

struct StateStoreOptions {
  std::string ns = "default";  // the reconciler's own namespace
  std::string name = "gpuscale-reconciler-state";
  int maxEntries = 1000;
  std::size_t maxBytes = 512 * 1024;
  // What the HPAs of one namespace may hold of it, so that no namespace fills the store for
  // the others.
  int maxEntriesPerNamespace = 100;
  std::size_t maxBytesPerNamespace = 64 * 1024;
};

struct HpaRecord {
  std::string uid;
  std::optional<TimePoint> lastChange;     // gpuscale last changed maxReplicas
  std::optional<int> originalMaxReplicas;  // before gpuscale's first raise
  std::optional<HpaIntent> intent;         // a raise waiting for its node operations
  // Nothing worth keeping (the entry is removed).
  bool empty() const { return !lastChange && !originalMaxReplicas && !intent; }
  friend bool operator==(const HpaRecord&, const HpaRecord&) = default;
};

// "<namespace>.<name>", and back (nullopt for a key without a dot).
std::string hpaRecordKey(std::string_view ns, std::string_view name);
std::optional<std::pair<std::string, std::string>> splitHpaRecordKey(std::string_view key);
std::string encodeHpaRecord(const HpaRecord& record);
// nullopt for malformed or oversized text (kMaxIntentBytes) or a record without uid.
std::optional<HpaRecord> decodeHpaRecord(std::string_view text);

// Fills each snapshot HPA's lastChange, originalMaxReplicas and promisedMaxReplicas (an intent's
// `to`) from the store's ConfigMap `data` (entries of another uid or malformed ones count as
// absent). The offline `plan` uses it on a dump that includes the state ConfigMap.
void applyHpaRecords(const std::map<std::string, std::string>& data,
                     partition::ClusterSnapshot& snapshot);

// The data of the state ConfigMap named `name` (in any namespace) found in a dump (a List, an
// array of them, or objects, as `kubectl get -o json` writes them); empty when there is none.
std::map<std::string, std::string> stateRecordsIn(const nlohmann::json& dump,
                                                  std::string_view name);

// True for the error a refused write (a cap reached) answers.
bool isStateStoreFull(const core::Status& status);

class HpaStateStore {
 public:
  HpaStateStore(std::shared_ptr<kube::KubeClient> client, StateStoreOptions options,
                std::shared_ptr<ReconcilerMetrics> metrics = nullptr);

  // Reads the ConfigMap (absent: no entries). On error the previous contents stay.
  core::Status load();

  // The record of the HPA `ns`/`name` with metadata.uid `uid`, or nullopt (none, malformed, or
  // another HPA's of the same name).
  std::optional<HpaRecord> get(std::string_view ns, std::string_view name,
                               std::string_view uid) const;
  // The ConfigMap's data as last read or written (a pass's input: reconciler/pass.h).
  std::map<std::string, std::string> records() const;

  // Read-modify-write of one HPA's record: `edit` gets the stored record (a fresh one with `uid`
  // when there is none or it belongs to another uid) and changes it in place. Nothing is written
  // when the record is unchanged; an empty record removes the entry. Returns whether it wrote.
  core::Result<bool> update(std::string_view ns, std::string_view name, std::string_view uid,
                            const std::function<void(HpaRecord&)>& edit);

  // Removes the entries for which keep(namespace, name, uid) is false, and malformed ones.
  core::Status prune(
      const std::function<bool(const std::string&, const std::string&, const std::string&)>& keep);

  const StateStoreOptions& options() const { return options_; }

 private:
  kube::ResourceRef ref() const;
  void remember(std::map<std::string, std::string> data);

  std::shared_ptr<kube::KubeClient> client_;
  StateStoreOptions options_;
  DegradedLog degraded_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> data_;  // as last read or written
};

}  // namespace gpuscale::reconciler
