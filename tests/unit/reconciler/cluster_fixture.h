// A FakeKubeClient seeded from the partition seed dumps, a client wrapper that records every write
// in order, and readers that turn the fake's contents back into the object list a controller pass
// takes.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fstream>

#include "fakes/fake_kube_client.h"
#include "gpuscale/kube/forwarding_client.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "gpuscale/reconciler/policy_source.h"
#include "unit/partition/kube_objects.h"

namespace gpuscale::reconciler::testing {

using nlohmann::json;

// The collection of a kind the controller watches, in namespace `ns` ("" for every namespace, and
// for cluster-scoped kinds, whose seed items carry none).
inline kube::ResourceRef refFor(const WatchedResource& w, const std::string& ns = {}) {
  return kube::ResourceRef::collection(w.group, w.version, w.resource, ns);
}

// One write as the API server saw it.
struct Write {
  std::string verb, resource, name;
  json body;
};

// Delegates to a FakeKubeClient and keeps the writes in order.
class RecordingClient final : public kube::ForwardingKubeClient {
 public:
  explicit RecordingClient(std::shared_ptr<gpuscale::testing::FakeKubeClient> fake)
      : ForwardingKubeClient(fake) {}
  core::Result<kube::ObjectList> list(const kube::ResourceRef& ref,
                                      const kube::ListOptions& options) override {
    if (options.fieldSelector.rfind("spec.nodeName=", 0) != 0) return inner().list(ref, options);
    // The fake knows only metadata field selectors; filter pods by node here.
    kube::ListOptions all = options;
    all.fieldSelector.clear();
    auto r = inner().list(ref, all);
    if (!r) return r;
    const std::string node = options.fieldSelector.substr(14);
    std::erase_if(r->items, [&](const json& p) { return p["spec"].value("nodeName", "") != node; });
    return r;
  }
  core::Result<kube::Object> get(const kube::ResourceRef& ref) override {
    {
      std::lock_guard lock(mu_);
      ++gets_[ref.resource];
    }
    return inner().get(ref);
  }
  // GETs of `resource` (a plural) so far.
  int gets(const std::string& resource) const {
    std::lock_guard lock(mu_);
    auto it = gets_.find(resource);
    return it == gets_.end() ? 0 : it->second;
  }

 protected:
  core::Result<kube::Object> write(const WriteCall& call, const Send& send) override {
    if (call.body != nullptr) {
      std::string name = call.ref.name;
      if (name.empty() && call.body->contains("metadata") && (*call.body)["metadata"].is_object()) {
        name = (*call.body)["metadata"].value("name", "");
      }
      log(std::string(call.verb).c_str(), call.ref, name, *call.body);
    }
    return send();
  }

 public:
  std::vector<Write> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }
  // Index of the first write matching `pred`, or -1.
  template <typename Pred>
  int firstWhere(Pred pred) const {
    auto all = writes();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (pred(all[i])) return static_cast<int>(i);
    }
    return -1;
  }
  template <typename Pred>
  int countWhere(Pred pred) const {
    int n = 0;
    for (const auto& w : writes()) n += pred(w) ? 1 : 0;
    return n;
  }

 private:
  void log(const char* verb, const kube::ResourceRef& ref, std::string name, const json& body) {
    std::lock_guard lock(mu_);
    writes_.push_back({verb, ref.resource, std::move(name), body});
  }
  mutable std::mutex mu_;
  std::vector<Write> writes_;
  std::map<std::string, int> gets_;
};

// Creates every item of a seed dump whose kind the controller watches in `fake`.
inline void seed(gpuscale::testing::FakeKubeClient& fake, const json& dump) {
  for (const auto& item : dump["items"]) {
    for (const auto& k : watchedResources()) {
      if (item.value("kind", "") != k.kind) continue;
      auto r = fake.create(refFor(k, item["metadata"].value("namespace", "")), item);
      EXPECT_TRUE(r.ok()) << r.status().toString();
    }
  }
}

// Everything of the kinds the controller watches in `fake` (in every namespace), with `kind` set as
// its informers deliver it.
inline std::vector<json> objectsOf(gpuscale::testing::FakeKubeClient& fake) {
  std::vector<json> out;
  for (const auto& k : watchedResources()) {
    auto r = fake.list(refFor(k), {});
    EXPECT_TRUE(r.ok());
    if (!r) continue;
    for (auto item : r->items) {
      item["kind"] = k.kind;
      out.push_back(std::move(item));
    }
  }
  return out;
}

// The collection of the watched kind (controller.h: watchedResources()) `item` lives in.
inline kube::ResourceRef watchedCollectionOf(const json& item) {
  const std::string kind = item.value("kind", "");
  const std::string ns = item["metadata"].value("namespace", "");
  for (const auto& w : watchedResources()) {
    if (kind == w.kind) {
      const bool clusterScoped = kind == "Node" || kind == "ResourceSlice" || kind == "DeviceClass";
      return kube::ResourceRef::collection(w.group, w.version, w.resource,
                                           clusterScoped ? ""
                                           : ns.empty()  ? "default"
                                                         : ns);
    }
  }
  ADD_FAILURE() << "no watched kind " << kind;
  return {};
}

// Creates every item of `dump` (of the watched kinds, the DRA kinds included) in `fake`.
inline void seedWatched(gpuscale::testing::FakeKubeClient& fake, const json& dump) {
  for (const auto& item : dump["items"]) {
    auto r = fake.create(watchedCollectionOf(item), item);
    EXPECT_TRUE(r.ok()) << r.status().toString();
  }
}

// Everything of the watched kinds in `fake`, with `kind` set.
inline std::vector<json> watchedObjectsOf(gpuscale::testing::FakeKubeClient& fake) {
  std::vector<json> out;
  for (const auto& w : watchedResources()) {
    auto r = fake.list(kube::ResourceRef::collection(w.group, w.version, w.resource), {});
    if (!r) continue;
    for (auto item : r->items) {
      item["kind"] = w.kind;
      out.push_back(std::move(item));
    }
  }
  return out;
}

// The built-in levers and limits as a policy file that admits the seed dumps' HPAs (namespace
// "default"): a running reconciler manages nothing without one.
inline std::shared_ptr<PolicySource> seedPolicies(
    const std::string& text = "policies:\n- name: default\n  hpaNamespaces: [default]\n") {
  const std::string path = ::testing::TempDir() + "seed-policy.yaml";
  std::ofstream(path) << text;
  auto source = PolicySource::open(path);
  EXPECT_TRUE(source.ok()) << source.status().toString();
  return source.ok() ? *source : nullptr;
}

// The seed dumps' HPA, default/triton.
inline kube::ResourceRef nodeRef(const std::string& name) {
  return kube::ResourceRef::collection("", "v1", "nodes").named(name);
}

inline kube::ResourceRef tritonHpaRef() {
  return kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", "default")
      .named("triton");
}

// The reconciler's state store ConfigMap (StateStoreOptions defaults) in `fake`.
inline kube::ResourceRef stateStoreRef() {
  StateStoreOptions o;
  return kube::ResourceRef::collection("", "v1", "configmaps", o.ns).named(o.name);
}

// The recorded state of HPA `ns`/`name` in `fake` (whatever its uid), or nullopt.
inline std::optional<HpaRecord> recordOf(gpuscale::testing::FakeKubeClient& fake,
                                         const std::string& ns, const std::string& name) {
  auto cm = fake.get(stateStoreRef());
  if (!cm || !cm->contains("data")) return std::nullopt;
  const json& data = (*cm)["data"];
  const std::string key = hpaRecordKey(ns, name);
  if (!data.contains(key)) return std::nullopt;
  return decodeHpaRecord(data[key].get<std::string>());
}

// A GpuPodMapping that answers a fixed occupancy and records the pods it was asked about.
class FixedGpuPodMapping final : public GpuPodMapping {
 public:
  explicit FixedGpuPodMapping(std::optional<GpuOccupancy> answer) : answer_(std::move(answer)) {}
  std::optional<GpuOccupancy> occupancy(const std::string& node, const NodeGpuPods& pods,
                                        std::chrono::system_clock::time_point) override {
    std::lock_guard lock(mu_);
    for (const auto& [pod, _] : pods) asked[node].insert(pod);
    return answer_;
  }
  std::map<std::string, std::set<std::string>> asked;

 private:
  std::mutex mu_;
  std::optional<GpuOccupancy> answer_;
};

}  // namespace gpuscale::reconciler::testing
