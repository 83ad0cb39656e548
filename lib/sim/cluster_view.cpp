#include "gpuscale/sim/cluster_view.h"

#include <spdlog/spdlog.h>

#include "gpuscale/kube/informer.h"

namespace gpuscale::sim {
namespace {

kube::ResourceRef core(std::string resource, std::string ns = {}) {
  return kube::ResourceRef{"", "v1", std::move(resource), std::move(ns), "", ""};
}

class InformerView final : public ClusterView {
 public:
  InformerView(std::shared_ptr<kube::KubeClient> client, const std::string& ns,
               std::function<void()> onChange)
      : client_(client) {
    auto make = [&](kube::ResourceRef ref) {
      kube::InformerOptions options;
      options.resource = std::move(ref);
      auto informer = std::make_unique<kube::Informer>(client, options);
      informer->addHandler({[onChange](const kube::Object&) { onChange(); },
                            [onChange](const kube::Object&, const kube::Object&) { onChange(); },
                            [onChange](const kube::Object&) { onChange(); }});
      informer->start();
      return informer;
    };
    nodes_ = make(core("nodes"));
    configMaps_ = make(core("configmaps", ns));
    pods_ = make(core("pods"));
    ns_ = ns;
  }

  Ptr node(const std::string& name) override { return nodes_->store().get("", name); }
  // Read through the API, not the cache: the operator's components read their mounted files when
  // they run, and a cache that lags the writer by a few milliseconds would fail a config the
  // writer set just before its label (the emulation has no volume propagation delay).
  Ptr configMap(const std::string& name) override {
    auto r = client_->get(core("configmaps", ns_).named(name));
    if (r.ok()) return std::make_shared<const kube::Object>(std::move(*r));
    if (k8s::isNotFound(r.status())) return nullptr;
    spdlog::warn("get ConfigMap {}/{}: {}; using the cached copy", ns_, name,
                 r.status().toString());
    return configMaps_->store().get(ns_, name);
  }
  std::vector<Ptr> pods() override { return pods_->store().all(); }
  bool waitForSync(std::chrono::milliseconds timeout) override {
    return nodes_->waitForSync(timeout) && configMaps_->waitForSync(timeout) &&
           pods_->waitForSync(timeout);
  }

 private:
  std::shared_ptr<kube::KubeClient> client_;
  std::string ns_;
  std::unique_ptr<kube::Informer> nodes_, configMaps_, pods_;
};

class DirectView final : public ClusterView {
 public:
  DirectView(std::shared_ptr<kube::KubeClient> client, std::string ns)
      : client_(std::move(client)), ns_(std::move(ns)) {}

  Ptr node(const std::string& name) override { return get(core("nodes").named(name)); }
  Ptr configMap(const std::string& name) override {
    return get(core("configmaps", ns_).named(name));
  }
  std::vector<Ptr> pods() override {
    std::vector<Ptr> out;
    auto list = client_->list(core("pods"), {});
    if (!list.ok()) {
      spdlog::warn("list pods: {}", list.status().toString());
      return out;
    }
    for (auto& item : list->items)
      out.push_back(std::make_shared<const kube::Object>(std::move(item)));
    return out;
  }
  bool waitForSync(std::chrono::milliseconds) override { return true; }

 private:
  Ptr get(const kube::ResourceRef& ref) {
    auto r = client_->get(ref);
    if (r.ok()) return std::make_shared<const kube::Object>(std::move(*r));
    if (!k8s::isNotFound(r.status())) spdlog::warn("get {}: {}", ref.path(), r.status().toString());
    return nullptr;
  }

  std::shared_ptr<kube::KubeClient> client_;
  std::string ns_;
};

}  // namespace

std::unique_ptr<ClusterView> makeInformerView(std::shared_ptr<kube::KubeClient> client,
                                              const std::string& operatorNamespace,
                                              std::function<void()> onChange) {
  return std::make_unique<InformerView>(std::move(client), operatorNamespace, std::move(onChange));
}

std::unique_ptr<ClusterView> makeDirectView(std::shared_ptr<kube::KubeClient> client,
                                            const std::string& operatorNamespace) {
  return std::make_unique<DirectView>(std::move(client), operatorNamespace);
}

}  // namespace gpuscale::sim
