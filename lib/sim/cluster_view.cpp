#include "gpuscale/sim/cluster_view.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <optional>

#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/sim/config_map_history.h"

namespace gpuscale::sim {
namespace {

kube::ResourceRef core(std::string resource, std::string ns = {}) {
  return kube::ResourceRef{"", "v1", std::move(resource), std::move(ns), "", ""};
}

class InformerView final : public ClusterView {
 public:
  InformerView(std::shared_ptr<kube::KubeClient> client, const std::string& ns,
               std::function<void()> onChange, std::chrono::milliseconds configMapSync)
      : client_(client), configMapSync_(configMapSync), history_(configMapSync) {
    auto make = [&](kube::ResourceRef ref, std::optional<kube::InformerHandler> extra = {}) {
      kube::InformerOptions options;
      options.resource = std::move(ref);
      auto informer = std::make_unique<kube::Informer>(client, options);
      if (extra) informer->addHandler(std::move(*extra));
      informer->addHandler({[onChange](const kube::Object&) { onChange(); },
                            [onChange](const kube::Object&, const kube::Object&) { onChange(); },
                            [onChange](const kube::Object&) { onChange(); }});
      informer->start();
      return informer;
    };
    auto remember = [this](const kube::Object& object, bool deleted) {
      const auto seen =
          synced_ ? ConfigMapHistory::Clock::now() : ConfigMapHistory::Clock::time_point::min();
      history_.record(k8s::nameOf(object),
                      deleted ? nullptr : std::make_shared<const kube::Object>(object), seen);
    };
    nodes_ = make(core("nodes"));
    configMaps_ =
        make(core("configmaps", ns),
             kube::InformerHandler{
                 [remember](const kube::Object& o) { remember(o, false); },
                 [remember](const kube::Object&, const kube::Object& o) { remember(o, false); },
                 [remember](const kube::Object& o) { remember(o, true); }});
    pods_ = make(core("pods"));
    ns_ = ns;
  }

  Ptr node(const std::string& name) override { return nodes_->store().get("", name); }
  // Without a sync delay, read through the API, not the cache: the operator's components read their
  // mounted files when they run, and a cache that lags the writer by a few milliseconds would fail
  // a config the writer set just before its label.
  Ptr configMap(const std::string& name) override {
    if (configMapSync_.count() > 0) return history_.asOf(name, ConfigMapHistory::Clock::now());
    auto r = client_->get(core("configmaps", ns_).named(name));
    if (r.ok()) return std::make_shared<const kube::Object>(std::move(*r));
    if (k8s::isNotFound(r.status())) return nullptr;
    spdlog::warn("get ConfigMap {}/{}: {}; using the cached copy", ns_, name,
                 r.status().toString());
    return configMaps_->store().get(ns_, name);
  }
  std::vector<Ptr> pods() override { return pods_->store().all(); }
  bool waitForSync(std::chrono::milliseconds timeout) override {
    const bool synced = nodes_->waitForSync(timeout) && configMaps_->waitForSync(timeout) &&
                        pods_->waitForSync(timeout);
    if (synced) synced_ = true;  // versions seen from now on were written now
    return synced;
  }

 private:
  std::shared_ptr<kube::KubeClient> client_;
  const std::chrono::milliseconds configMapSync_;
  ConfigMapHistory history_;
  std::atomic<bool> synced_{false};
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
                                              std::function<void()> onChange,
                                              std::chrono::milliseconds configMapSync) {
  return std::make_unique<InformerView>(std::move(client), operatorNamespace, std::move(onChange),
                                        configMapSync);
}

std::unique_ptr<ClusterView> makeDirectView(std::shared_ptr<kube::KubeClient> client,
                                            const std::string& operatorNamespace) {
  return std::make_unique<DirectView>(std::move(client), operatorNamespace);
}

}  // namespace gpuscale::sim
