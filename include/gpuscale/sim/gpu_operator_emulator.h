// GpuOperatorEmulator: the GPU Operator of gpuscale-sim acting on a real Kubernetes API — GPU nodes
// for KWOK, the mig-parted and device-plugin ConfigMaps, a mig-manager (mig_manager_model.h) and a
// device plugin with GFD (node_advertisement.h) per node.
//
// start() creates the ConfigMaps (kept if they exist: operators and the reconciler edit them) and
// the Nodes (annotated for KWOK, with GFD labels, capacity and allocatable; an existing Node is
// adopted), then watches Nodes, ConfigMaps and Pods through informers and reconciles every node on
// each change and when a mig-manager run is due. A reconcile pass: feed the node's
// `nvidia.com/mig.config` label to the mig-manager; load the device-plugin config selected by
// `nvidia.com/device-plugin.config` (or the default) when the label changes or the plugin restarts
// after a MIG change (as the config-manager sidecar does; edits of the selected key alone are not
// picked up, and an unknown key keeps the old config and is retried); place pods on GPUs; finish
// due mig-manager runs; then write what changed: labels with a metadata merge patch, capacity and
// allocatable with a merge patch of the `status` subresource. Pods are never touched. A pending
// mig-manager run pauses the operands it pauses for real: device plugin, GFD and dcgm-exporter
// (`nvidia.com/gpu.deploy.*` = `paused-for-mig-change`). Nodes whose spec has `dra` run NVIDIA's
// DRA driver instead of the device plugin (dra_driver.h): no GPU resources in allocatable, their
// GPUs published as ResourceSlices after each pass, and the claims of their pods prepared.
//
// Every transition is logged (spdlog) and counted in the prometheus-cpp registry given.
//
// Thread safety: start/stop from one thread; reconcile passes are serialised internally;
// healthy(), podDevices() and the metrics are safe from any thread.
#pragma once

#include <chrono>
#include <memory>

#include <prometheus/registry.h>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/sim/pod_devices.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

struct EmulatorOptions {
  // The annotation KWOK selects its nodes by (up.sh's GPUSCALE_KWOK_NODE_ANNOTATION[_VALUE]).
  std::string kwokAnnotationKey = "kwok.x-k8s.io/node";
  std::string kwokAnnotationValue = "fake";
  // A pass runs at least this often even without events (safety net for missed watches).
  std::chrono::milliseconds resyncPeriod{5000};
  // false: no informers or thread; the caller drives reconcile() (tests, with reads straight from
  // the client so each pass sees the previous pass's writes).
  bool background = true;
};

class GpuOperatorEmulator {
 public:
  // Validates the scenario against the catalog (initial MIG configs must resolve).
  static core::Result<std::unique_ptr<GpuOperatorEmulator>> create(
      std::shared_ptr<kube::KubeClient> client, Scenario scenario, EmulatorOptions options,
      std::shared_ptr<prometheus::Registry> registry);
  ~GpuOperatorEmulator();

  // Creates ConfigMaps and Nodes; in background mode starts informers and the reconcile thread.
  core::Status start();
  void stop();

  // One pass over every node at `now`.
  void reconcile(std::chrono::steady_clock::time_point now);

  // Nodes and ConfigMaps exist and (background) the informers have synced.
  bool healthy() const;

  // The device of every Running, not deleted pod that holds nvidia.com/* resources on an emulated
  // node (pod_devices.h), as of the last reconcile pass's placement; empty before start().
  // Thread-safe (serialised with reconcile passes).
  std::vector<PodDevice> podDevices() const;

  // Every emulated node's GPUs (geometry, device-plugin config, paused operands) with the devices
  // of its pods as podDevices() places them; empty before start(). Thread-safe.
  std::vector<NodeGpuView> nodeGpus() const;

 private:
  GpuOperatorEmulator(std::shared_ptr<kube::KubeClient> client, Scenario scenario,
                      EmulatorOptions options, std::shared_ptr<prometheus::Registry> registry);
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::sim
