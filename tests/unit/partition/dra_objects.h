// Builders for the DRA objects (resource.k8s.io/v1) partition tests feed to the readers of
// dra_objects.h and to buildSnapshot(), shaped as NVIDIA's GPU DRA driver (`gpu.nvidia.com`)
// publishes them, with only the fields the readers read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube_objects.h"

namespace gpuscale::partition::testing {

using nlohmann::json;

// A whole GPU `gpu-<minor>` (type gpu) with its uuid, product and memory.
inline json draGpuDevice(int minor, const std::string& product = "NVIDIA A100-SXM4-40GB") {
  const std::string uuid = "GPU-" + std::to_string(minor);
  return {{"name", "gpu-" + std::to_string(minor)},
          {"attributes",
           {{"type", {{"string", "gpu"}}},
            {"uuid", {{"string", uuid}}},
            {"productName", {{"string", product}}},
            {"driverVersion", {{"version", "550.90.7"}}},
            {"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:00"}}}}},
          {"capacity", {{"memory", {{"value", "40Gi"}}}}}};
}

// A MIG device of `profile` on GPU `minor` at `start`; with `counterSet`, a partitionable placement
// consuming `counters` from it (the driver's DynamicMIG), else a static device with its uuid.
inline json draMigDevice(int minor, const std::string& profile, int start,
                         const std::string& memory = "4864Mi", const std::string& counterSet = "",
                         const std::map<std::string, std::string>& counters = {}) {
  std::string bare;
  for (char c : profile) {
    if (c != '.') bare += c;
  }
  json d{{"name", "gpu-" + std::to_string(minor) + "-mig-" + bare + "-" + std::to_string(start)},
         {"attributes",
          {{"type", {{"string", "mig"}}},
           {"profile", {{"string", profile}}},
           {"parentUUID", {{"string", "GPU-" + std::to_string(minor)}}},
           {"productName", {{"string", "NVIDIA A100-SXM4-40GB"}}}}},
         {"capacity", {{"memory", {{"value", memory}}}}}};
  if (counterSet.empty()) {
    d["attributes"]["uuid"] = {
        {"string", "MIG-" + std::to_string(minor) + "-" + std::to_string(start)}};
    return d;
  }
  json use = json::object();
  for (const auto& [name, value] : counters) use[name] = {{"value", value}};
  d["consumesCounters"] = json::array({{{"counterSet", counterSet}, {"counters", use}}});
  return d;
}

// A counter set of `counters` (name -> quantity).
inline json draCounterSet(const std::string& name,
                          const std::map<std::string, std::string>& counters) {
  json c = json::object();
  for (const auto& [counter, value] : counters) c[counter] = {{"value", value}};
  return {{"name", name}, {"counters", c}};
}

// A node-local slice of the node's pool (named after the node).
inline json draSlice(const std::string& node, std::vector<json> devices, int generation = 1,
                     int sliceCount = 1, std::vector<json> sharedCounters = {},
                     const std::string& name = "") {
  json spec{
      {"driver", "gpu.nvidia.com"},
      {"nodeName", node},
      {"pool", {{"name", node}, {"generation", generation}, {"resourceSliceCount", sliceCount}}}};
  if (!devices.empty()) spec["devices"] = std::move(devices);
  if (!sharedCounters.empty()) spec["sharedCounters"] = std::move(sharedCounters);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name.empty() ? node + "-gpu.nvidia.com" : name}}},
          {"spec", spec}};
}

// A DeviceClass of the driver's chart: its devices of `type` ("gpu", "mig").
inline json draDeviceClass(const std::string& name, const std::string& type) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"selectors", json::array({{{"cel",
                                         {{"expression",
                                           "device.driver == 'gpu.nvidia.com' && "
                                           "device.attributes['gpu.nvidia.com'].type == '" +
                                               type + "'"}}}}})}}}};
}

// A ResourceClaimTemplate with one `exactly` request of `count` devices of `deviceClass`.
inline json draClaimTemplate(const std::string& ns, const std::string& name,
                             const std::string& deviceClass, int count = 1,
                             const std::vector<std::string>& selectors = {}) {
  json exactly{{"deviceClassName", deviceClass}, {"count", count}};
  for (const auto& s : selectors) exactly["selectors"].push_back({{"cel", {{"expression", s}}}});
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaimTemplate"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"spec",
         {{"devices", {{"requests", json::array({{{"name", "gpu"}, {"exactly", exactly}}})}}}}}}}};
}

// A ResourceClaim made for pod `pod` and allocated `device` of `node`'s pool (none when empty).
inline json draClaim(const std::string& ns, const std::string& name, const std::string& pod,
                     const std::string& node, const std::string& device) {
  json claim{{"apiVersion", "resource.k8s.io/v1"},
             {"kind", "ResourceClaim"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"spec", json::object()}};
  if (device.empty()) return claim;
  claim["status"] = {{"allocation",
                      {{"devices",
                        {{"results", json::array({{{"request", "gpu"},
                                                   {"driver", "gpu.nvidia.com"},
                                                   {"pool", node},
                                                   {"device", device}}})}}}}},
                     {"reservedFor", json::array({{{"resource", "pods"}, {"name", pod}}})}};
  return claim;
}

// The slice of a partitionable A100-40GB (the driver's DynamicMIG) on `node`: the whole GPU, the
// seven 1g.5gb placements and (with `big`) the two 3g.20gb placements, each consuming the memory
// slices it covers from counter set `gpu-0-counter-set`, which the slice holds.
inline json draPartitionableSlice(const std::string& node, bool big = true) {
  const std::string set = "gpu-0-counter-set";
  auto slices = [](int from, int n) {
    std::map<std::string, std::string> out;
    for (int i = from; i < from + n; ++i) out["memory-slice-" + std::to_string(i)] = "1";
    return out;
  };
  json whole = draGpuDevice(0);
  json counters = json::object();
  for (const auto& [counter, one] : slices(0, 8)) counters[counter] = {{"value", one}};
  whole["consumesCounters"] = json::array({{{"counterSet", set}, {"counters", counters}}});
  std::vector<json> devices{whole};
  for (int start = 0; start < 7; ++start) {
    devices.push_back(draMigDevice(0, "1g.5gb", start, "4864Mi", set, slices(start, 1)));
  }
  for (int start : {0, 4}) {
    if (big) devices.push_back(draMigDevice(0, "3g.20gb", start, "19968Mi", set, slices(start, 4)));
  }
  return draSlice(node, devices, 1, 1, {draCounterSet(set, slices(0, 8))});
}

// A GPU node whose GPUs the DRA driver publishes: GPU Feature Discovery's and mig-manager's labels
// of one A100-40GB in `migConfig`, no nvidia.com/ allocatable.
inline json draNode(const std::string& name, const std::string& migConfig) {
  return gpuNode(name,
                 {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                  {"nvidia.com/gpu.count", "1"},
                  {"nvidia.com/mig.capable", "true"},
                  {"nvidia.com/mig.strategy", "mixed"},
                  {"nvidia.com/mig.config", migConfig},
                  {"nvidia.com/mig.config.state", "success"}},
                 {});
}

// Pod `index` of `app`, whose one claim `gpu` comes from ResourceClaimTemplate `tmpl`: Running on
// `node` with its claim made, or (node "") Pending because the scheduler cannot allocate it.
inline json claimPod(const std::string& app, int index, const std::string& tmpl,
                     const std::string& node) {
  const std::string name = app + "-" + std::to_string(index);
  json pod{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", app}}}}},
           {"spec",
            {{"containers",
              json::array({{{"name", "c"}, {"resources", {{"claims", {{{"name", "gpu"}}}}}}}})},
             {"resourceClaims",
              json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", tmpl}}})}}}};
  placePod(pod, node, "0/4 nodes are available: 3 cannot allocate all claims.");
  if (!node.empty()) {
    pod["status"]["resourceClaimStatuses"] =
        json::array({{{"name", "gpu"}, {"resourceClaimName", name + "-gpu"}}});
  }
  return pod;
}

// A Deployment of `app` whose pods claim one device each through ResourceClaimTemplate `tmpl`.
inline json claimDeployment(const std::string& app, int replicas, const std::string& tmpl) {
  json d = deployment("default", app, replicas, "nvidia.com/gpu");
  json& spec = d["spec"]["template"]["spec"];
  spec = claimPod(app, 0, tmpl, "")["spec"];
  return d;
}

// A mixed cluster: "dp-a100", a device-plugin A100 (7 x 1g.5gb) full of plugin-app's pods with one
// more pending; three nodes whose GPUs the DRA driver publishes: "dra-static" (7 static 1g.5gb
// devices, all claimed by claims-app's pods, one more pending), "dra-idle" (2 static 3g.20gb
// devices, free) and "dra-part" (a partitionable GPU whose whole GPU another claim holds). Both
// HPAs are at maxReplicas.
inline json draMixedCluster() {
  std::vector<json> items{
      migNode("dp-a100", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}}),
      draNode("dra-static", "all-1g.5gb"),
      draNode("dra-idle", "all-3g.20gb"),
      draNode("dra-part", "all-disabled"),
      draDeviceClass("gpu.nvidia.com", "gpu"),
      draDeviceClass("mig.nvidia.com", "mig"),
      draClaimTemplate("default", "one-slice", "mig.nvidia.com", 1,
                       {"device.attributes['gpu.nvidia.com'].profile == "
                        "'1g.5gb'"})};
  append(items, blockedApp("plugin-app", "nvidia.com/mig-1g.5gb", "dp-a100", 7, 1));
  std::vector<json> staticDevices;
  for (int i = 0; i < 7; ++i) {
    staticDevices.push_back(draMigDevice(0, "1g.5gb", i));
    items.push_back(claimPod("claims-app", i, "one-slice", "dra-static"));
    items.push_back(draClaim("default", "claims-app-" + std::to_string(i) + "-gpu",
                             "claims-app-" + std::to_string(i), "dra-static",
                             staticDevices.back()["name"].get<std::string>()));
  }
  items.push_back(draSlice("dra-static", staticDevices));
  items.push_back(claimPod("claims-app", 7, "one-slice", ""));
  items.push_back(claimDeployment("claims-app", 8, "one-slice"));
  items.push_back(hpa("default", "claims-app", hpaSpec(1, 8, 8, 8, "100", "50", true)));
  items.push_back(draSlice("dra-idle", {draMigDevice(0, "3g.20gb", 0, "19968Mi"),
                                        draMigDevice(0, "3g.20gb", 4, "19968Mi")}));
  items.push_back(draPartitionableSlice("dra-part", false));
  items.push_back(draClaim("other", "training-gpu", "trainer", "dra-part", "gpu-0"));
  return migCluster(items);
}

}  // namespace gpuscale::partition::testing
