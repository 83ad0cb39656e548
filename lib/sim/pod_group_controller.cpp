#include "gpuscale/sim/pod_group_controller.h"

#include <charconv>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpuscale/k8s/object_accessors.h"

namespace gpuscale::sim {
namespace {

using namespace std::chrono_literals;
using kube::Object;

// The labels LeaderWorkerSet puts on its pods.
constexpr const char* kNameLabel = "leaderworkerset.sigs.k8s.io/name";
constexpr const char* kGroupLabel = "leaderworkerset.sigs.k8s.io/group-index";
constexpr const char* kWorkerLabel = "leaderworkerset.sigs.k8s.io/worker-index";

int intAt(const Object& object, const char* key, int fallback) {
  auto it = object.is_object() ? object.find(key) : object.end();
  return it != object.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

}  // namespace

PodGroupController::PodGroupController(std::shared_ptr<kube::KubeClient> client,
                                       kube::ResourceRef collection)
    : client_(std::move(client)), collection_(std::move(collection)) {}

PodGroupController::~PodGroupController() { stop(); }

void PodGroupController::start() {
  auto poke = [this] {
    {
      std::lock_guard lock(mu_);
      dirty_ = true;
    }
    cv_.notify_all();
  };
  kube::InformerHandler handler{[poke](const Object&) { poke(); },
                                [poke](const Object&, const Object&) { poke(); },
                                [poke](const Object&) { poke(); }};
  kube::InformerOptions sets;
  sets.resource = collection_;
  sets_ = std::make_unique<kube::Informer>(client_, sets);
  sets_->addHandler(handler);
  kube::InformerOptions pods;
  pods.resource = kube::ResourceRef::collection("", "v1", "pods");
  pods.labelSelector = kNameLabel;
  pods_ = std::make_unique<kube::Informer>(client_, pods);
  pods_->addHandler(handler);
  sets_->start();
  pods_->start();
  loop_ = std::jthread([this](std::stop_token stop) {
    while (!stop.stop_requested()) {
      {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, stop, 5s, [this] { return dirty_; });
        if (stop.stop_requested()) return;
        dirty_ = false;
      }
      if (sets_->hasSynced() && pods_->hasSynced()) reconcile();
      std::this_thread::sleep_for(200ms);  // coalesces bursts of events
    }
  });
}

void PodGroupController::stop() {
  if (loop_.joinable()) {
    loop_.request_stop();
    cv_.notify_all();
    loop_.join();
  }
  if (sets_) sets_->stop();
  if (pods_) pods_->stop();
}

void PodGroupController::reconcile() {
  for (const auto& set : sets_->store().all()) reconcileGroupSet(*set);
}

void PodGroupController::reconcileGroupSet(const Object& set) {
  const Object& meta = k8s::objectField(set, "metadata");
  const std::string ns = k8s::stringField(meta, "namespace");
  const std::string name = k8s::stringField(meta, "name");
  if (meta.contains("deletionTimestamp")) return;
  const Object& spec = k8s::objectField(set, "spec");
  const Object& lwt = k8s::objectField(spec, "leaderWorkerTemplate");
  const int replicas = intAt(spec, "replicas", 1);
  const int size = std::max(1, intAt(lwt, "size", 1));
  const Object& tpl = k8s::objectField(lwt, "workerTemplate");
  const auto pods = kube::ResourceRef::collection("", "v1", "pods", ns);

  std::set<std::string> have;
  for (const auto& pod : pods_->store().list(
           *core::LabelSelector::parse(fmt::format("{}={}", kNameLabel, name)), ns)) {
    const Object& podMeta = k8s::objectField(*pod, "metadata");
    const std::string podName = k8s::stringField(podMeta, "name");
    const std::string group = k8s::stringField(k8s::objectField(podMeta, "labels"), kGroupLabel);
    int index = 0;
    const auto [end, ec] = std::from_chars(group.data(), group.data() + group.size(), index);
    if (ec != std::errc() || end != group.data() + group.size()) continue;
    if (index < replicas) {
      have.insert(podName);
    } else if (!podMeta.contains("deletionTimestamp")) {
      if (auto s = client_->remove(pods.named(podName)); !s.ok() && !k8s::isNotFound(s)) {
        spdlog::warn("pod groups: deleting {}/{}: {}", ns, podName, s.message());
      }
    }
  }
  for (int g = 0; g < replicas; ++g) {
    for (int w = 0; w < size; ++w) {
      const std::string podName =
          w == 0 ? fmt::format("{}-{}", name, g) : fmt::format("{}-{}-{}", name, g, w);
      if (have.contains(podName)) continue;
      Object labels = k8s::objectField(k8s::objectField(tpl, "metadata"), "labels");
      if (!labels.is_object()) labels = Object::object();
      labels[kNameLabel] = name;
      labels[kGroupLabel] = std::to_string(g);
      labels[kWorkerLabel] = std::to_string(w);
      Object pod{
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", podName},
            {"namespace", ns},
            {"labels", labels},
            {"ownerReferences", Object::array({{{"apiVersion", k8s::stringField(set, "apiVersion")},
                                                {"kind", k8s::stringField(set, "kind")},
                                                {"name", name},
                                                {"uid", k8s::stringField(meta, "uid")},
                                                {"controller", true}}})}}},
          {"spec", k8s::objectField(tpl, "spec")}};
      if (auto r = client_->create(pods, pod); !r && r.status().httpCode() != 409) {
        spdlog::warn("pod groups: creating {}/{}: {}", ns, podName, r.status().message());
      }
    }
  }
  const std::string selector = fmt::format("{}={},{}=0", kNameLabel, name, kWorkerLabel);
  const Object& status = k8s::objectField(set, "status");
  if (intAt(status, "replicas", -1) == replicas &&
      k8s::stringField(status, "hpaPodSelector") == selector) {
    return;
  }
  auto ref = collection_.inNamespace(ns).named(name);
  ref.subresource = "status";
  auto r = client_->patch(ref, kube::PatchType::kMerge,
                          {{"status", {{"replicas", replicas}, {"hpaPodSelector", selector}}}});
  if (!r) spdlog::warn("pod groups: status of {}/{}: {}", ns, name, r.status().message());
}

}  // namespace gpuscale::sim
