// DraDriver: NVIDIA's GPU DRA driver on the emulated nodes whose scenario spec has `dra`: the
// DeviceClasses its chart installs, the ResourceSlices of each node's pool (dra_devices.h), and the
// kubelet plugin's part for the KWOK pods bound to those nodes.
//
// Publication: a node's pool is (re)published when what it would publish changed (start, a
// mig-manager geometry change under static MIG) or the last attempt failed, as the kubelet plugin's
// ResourceSlice controller does: every slice of the pool carries the pool's new generation and
// slice count, existing slices of the node and driver are updated in name order, missing ones
// created (generateName `<node>-gpu.nvidia.com-`, owned by the Node), extra ones deleted. The slice
// layout follows the API server's version (1.35+: counters in a slice of their own).
//
// Kubelet plugin: KWOK runs the pods, so nothing calls NodePrepareResources. For every pod bound to
// a DRA node that uses ResourceClaims, the driver checks what a prepare would: each claim exists,
// is allocated, reserved for the pod, and every device of this driver in its allocation is in the
// node's pool as published. Then it sets the pod annotation `gpuscale.io/sim-dra-prepared: "true"`,
// which the test cluster's KWOK stage waits for before it runs a pod with claims
// (tests/cluster/up.sh), as the kubelet starts containers only after the claims are prepared. A
// claim that cannot be prepared keeps the pod Pending, logged once per pod and counted.
//
// The load model: what each prepared pod holds, in the device plugin's units (a whole GPU is
// `nvidia.com/gpu`, a MIG device of profile P `nvidia.com/mig-P`) on which GPU (heldDevices), so
// the inference load model serves a pod of claims as it serves one of device-plugin requests.
//
// Metrics (the emulator's registry): gpuscale_sim_dra_slice_writes_total{verb},
// gpuscale_sim_dra_prepared_pods_total, gpuscale_sim_dra_prepare_errors_total{reason}.
//
// Thread safety: start() then reconcileNode() from one thread (the emulator's pass).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

inline constexpr std::string_view kDraPreparedAnnotation = "gpuscale.io/sim-dra-prepared";

class DraDriver {
 public:
  DraDriver(std::shared_ptr<kube::KubeClient> client, prometheus::Registry& registry);

  // Creates the DeviceClasses (existing ones are kept) and reads the API server's version.
  core::Status start();

  // Publishes `spec`'s pool if needed, then prepares the pods bound to the node. `node`: the Node
  // object (its uid owns the slices); `pods`: every pod the emulator sees.
  void reconcileNode(const GpuNodeSpec& spec, const std::vector<partition::MigGpuSetting>& gpus,
                     const kube::Object& node,
                     const std::vector<std::shared_ptr<const kube::Object>>& pods);

  // One device a prepared pod holds: its GPU index and its device-plugin resource name.
  struct HeldDevice {
    int gpu = 0;
    std::string resource;
  };
  // The devices of this driver that the pod `podUid` on `node` held when it was prepared (empty
  // when it was not prepared here).
  std::vector<HeldDevice> heldDevices(const std::string& node, const std::string& podUid) const;

 private:
  struct Pool {
    std::string published;                      // dump of the slices last published successfully
    std::map<std::string, HeldDevice> devices;  // published device name -> what it is
    std::set<std::string> reported;             // pod uids whose prepare error was logged
    // Pod uids prepared here: the pod cache may still show one without its annotation.
    std::set<std::string> prepared;
    std::map<std::string, std::vector<HeldDevice>> held;  // pod uid -> its devices
  };

  core::Status publish(const GpuNodeSpec& spec, const kube::Object& node,
                       const std::vector<kube::Object>& slices);
  void prepare(const GpuNodeSpec& spec, Pool& pool, const kube::Object& pod);

  std::shared_ptr<kube::KubeClient> client_;
  bool splitCounters_ = true;
  std::map<std::string, Pool> pools_;
  prometheus::Family<prometheus::Counter>& sliceWrites_;
  prometheus::Counter& prepared_;
  prometheus::Family<prometheus::Counter>& prepareErrors_;
};

}  // namespace gpuscale::sim
