// Turning a plan into node operations (node_operation.h: nodeWorkFor): one per node, a MIG change
// carrying the node's time-slicing changes as its follow-up.
#include <map>

#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/resource_names.h"
#include "gpuscale/reconciler/node_operation.h"

namespace gpuscale::reconciler {
namespace {

std::vector<partition::MigGpuSetting> settingsOf(const partition::NodeState& node) {
  std::vector<partition::MigGpuSetting> out;
  for (const auto& g : node.gpus) out.push_back(g.setting);
  return out;
}

// Every GPU's setting once the MIG change `a` is applied.
std::vector<partition::MigGpuSetting> settingsAfter(const partition::MigReconfigure& a,
                                                    const partition::NodeState& node) {
  auto settings = settingsOf(node);
  for (const auto& g : a.gpus) {
    if (g.index >= 0 && static_cast<std::size_t>(g.index) < settings.size()) {
      settings[g.index] = {g.toMigEnabled, g.to};
    }
  }
  return settings;
}

NodeWork migWork(const partition::MigReconfigure& a, const partition::NodeState& node) {
  NodeWork w;
  w.node = a.node;
  w.intent.kind = NodeOpKind::kMig;
  w.intent.label = a.configName;
  partition::MigPartedConfig file;
  file.configs[a.configName] = a.entries;
  w.intent.config = partition::emitMigPartedConfig(file);
  // A MIG mode change resets every GPU of the node: every one of them must be idle.
  if (a.switchesMigMode()) {
    for (const auto& g : node.gpus) w.intent.gpus.push_back(g.index);
  } else {
    for (const auto& g : a.gpus) w.intent.gpus.push_back(g.index);
  }
  // The device plugin shares the new partitions as its current config says.
  const partition::SharingConfig* sharing =
      node.devicePluginConfig && node.devicePluginConfig->timeSlicing
          ? &*node.devicePluginConfig->timeSlicing
          : nullptr;
  if (auto exposed =
          partition::exposedResources(settingsAfter(a, node), node.migStrategy, sharing)) {
    for (const auto& [res, n] : *exposed) w.intent.expect[res] = n;
  }
  return w;
}

// `devices`: the physical devices behind each resource when the change applies (after a MIG
// change of the same plan, the partitions it creates).
NodeWork timeSlicingWork(const std::vector<const partition::TimeSlicingChange*>& cs,
                         const partition::NodeState& node,
                         const partition::ResourceCounts& devices) {
  NodeWork w;
  w.node = node.name;
  partition::DevicePluginConfig config;
  if (node.devicePluginConfig) {
    config = *node.devicePluginConfig;
  } else {
    config.migStrategy = node.migStrategy;
  }
  // A node shares one way: the planner changes all of a node's resources in one mode.
  const partition::SharingMode mode =
      cs.empty() ? partition::SharingMode::kTimeSlicing : cs.front()->mode;
  w.intent.kind =
      mode == partition::SharingMode::kMps ? NodeOpKind::kMps : NodeOpKind::kTimeSlicing;
  for (const auto* c : cs)
    config = partition::withSharingReplicas(config, mode, c->resource, c->replicas);
  const partition::SharingConfig* sharing = partition::sharingOf(config, mode);
  const bool rename = sharing != nullptr && sharing->renameByDefault;
  for (const auto* c : cs) {
    auto n = devices.find(c->resource);
    if (n == devices.end()) continue;
    std::string name = c->replicas > 1 && rename ? c->resource + ".shared" : c->resource;
    w.intent.expect[name] = n->second * c->replicas;
  }
  w.intent.config = partition::emitDevicePluginConfig(config);
  w.intent.label = partition::ownedConfigName(node.name, w.intent.config);
  return w;
}

}  // namespace

std::vector<NodeWork> nodeWorkFor(const partition::Plan& plan,
                                  const partition::ClusterSnapshot& snapshot) {
  std::map<std::string, const partition::MigReconfigure*> mig;
  std::map<std::string, std::vector<const partition::TimeSlicingChange*>> slicing;
  for (const auto& action : plan.actions) {
    if (const auto* m = std::get_if<partition::MigReconfigure>(&action)) mig[m->node] = m;
    if (const auto* t = std::get_if<partition::TimeSlicingChange>(&action)) {
      slicing[t->node].push_back(t);
    }
  }
  std::vector<NodeWork> out;
  for (const auto& [name, m] : mig) {
    const auto* node = snapshot.node(name);
    if (node == nullptr) continue;
    NodeWork w = migWork(*m, *node);
    w.dra = node->dra();
    if (auto it = slicing.find(name); it != slicing.end()) {
      // Replicas for partitions the MIG change creates: applied once they exist, in the same
      // operation, so the HPA waits for both.
      auto exposed =
          partition::exposedResources(settingsAfter(*m, *node), node->migStrategy, nullptr);
      partition::ResourceCounts devices;
      if (exposed) devices.insert(exposed->begin(), exposed->end());
      auto then = timeSlicingWork(it->second, *node, devices).intent;
      w.intent.then = TimeSlicingFollowUp{then.label, then.config, then.expect};
    }
    out.push_back(std::move(w));
  }
  for (const auto& [name, changes] : slicing) {
    if (mig.contains(name)) continue;
    if (const auto* node = snapshot.node(name)) {
      out.push_back(timeSlicingWork(changes, *node, node->devices));
    }
  }
  return out;
}

}  // namespace gpuscale::reconciler
