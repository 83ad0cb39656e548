#include "gpuscale/partition/read_fields.h"

#include <initializer_list>

#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;
using Keys = std::initializer_list<std::string_view>;

// Erases the members of `object` not in `keys`; anything but an object is left whole (its reader
// reports it as it would on the full object).
void keepOnly(json& object, Keys keys) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end();) {
    bool kept = false;
    for (std::string_view k : keys) kept = kept || it.key() == k;
    it = kept ? std::next(it) : object.erase(it);
  }
}

// Erases the string-valued members of `object` whose key `keep` refuses.
template <typename Keep>
void keepEntries(json& object, Keep&& keep) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end();) {
    it = it.value().is_string() && !keep(it.key()) ? object.erase(it) : std::next(it);
  }
}

// Calls `f` on object[key] when both are objects.
template <typename F>
void inMember(json& object, std::string_view key, F&& f) {
  if (!object.is_object()) return;
  auto it = object.find(key);
  if (it != object.end()) f(*it);
}

// keepOnly(element, keys) on each element of the array object[key].
void keepInEach(json& object, std::string_view key, Keys keys) {
  inMember(object, key, [&](json& list) {
    if (!list.is_array()) return;
    for (json& element : list) keepOnly(element, keys);
  });
}

void trimAnnotations(json& holder) {
  inMember(holder, "annotations",
           [](json& annotations) { keepEntries(annotations, keepsAnnotation); });
}

void trimMetadata(json& object, bool ownerReferences) {
  inMember(object, "metadata", [&](json& meta) {
    if (ownerReferences) {
      keepOnly(meta, {"name", "namespace", "uid", "resourceVersion", "labels", "annotations",
                      "creationTimestamp", "deletionTimestamp", "ownerReferences"});
    } else {
      keepOnly(meta, {"name", "namespace", "uid", "resourceVersion", "labels", "annotations",
                      "creationTimestamp", "deletionTimestamp"});
    }
    trimAnnotations(meta);
  });
}

void trimPodSpec(json& spec) {
  keepOnly(spec, {"nodeName", "priority", "nodeSelector", "resources", "resourceClaims",
                  "containers", "initContainers"});
  for (std::string_view list : {"containers", "initContainers"}) {
    keepInEach(spec, list, {"name", "image", "command", "args", "resources", "restartPolicy"});
  }
}

void trimNode(json& node) {
  keepOnly(node, {"apiVersion", "kind", "metadata", "spec", "status"});
  inMember(node, "spec", [](json& spec) { keepOnly(spec, {"unschedulable", "taints"}); });
  inMember(node, "status", [](json& status) {
    keepOnly(status, {"allocatable"});
    inMember(status, "allocatable", [](json& allocatable) {
      keepEntries(allocatable,
                  [](const std::string& name) { return name.starts_with(kNvidiaPrefix); });
    });
  });
}

void trimPod(json& pod) {
  keepOnly(pod, {"apiVersion", "kind", "metadata", "spec", "status"});
  inMember(pod, "spec", trimPodSpec);
  inMember(pod, "status", [](json& status) {
    keepOnly(status,
             {"phase", "nominatedNodeName", "startTime", "conditions", "resourceClaimStatuses"});
    inMember(status, "conditions", [](json& conditions) {
      if (!conditions.is_array()) return;
      // Only Ready and PodScheduled are read; a condition whose type is not a string stays for
      // the reader to report.
      json kept = json::array();
      for (json& c : conditions) {
        const auto type = c.find("type");
        const bool read =
            type == c.end() || !type->is_string() || *type == "Ready" || *type == "PodScheduled";
        if (read) kept.push_back(std::move(c));
      }
      conditions = std::move(kept);
    });
    keepInEach(status, "conditions", {"type", "status", "reason", "message"});
    keepInEach(status, "resourceClaimStatuses", {"name", "resourceClaimName"});
  });
}

void trimPodTemplate(json& tpl) {
  keepOnly(tpl, {"metadata", "spec"});
  inMember(tpl, "metadata", [](json& meta) {
    keepOnly(meta, {"annotations"});
    trimAnnotations(meta);
  });
  inMember(tpl, "spec", trimPodSpec);
}

void trimWorkload(json& workload) {
  keepOnly(workload, {"apiVersion", "kind", "metadata", "spec"});
  inMember(workload, "spec", [](json& spec) {
    keepOnly(spec, {"replicas", "selector", "template"});
    inMember(spec, "template", trimPodTemplate);
  });
}

void trimLeaderWorkerSet(json& lws) {
  keepOnly(lws, {"apiVersion", "kind", "metadata", "spec"});
  inMember(lws, "spec", [](json& spec) {
    keepOnly(spec, {"replicas", "leaderWorkerTemplate"});
    inMember(spec, "leaderWorkerTemplate", [](json& lwt) {
      keepOnly(lwt, {"size", "workerTemplate", "leaderTemplate"});
      inMember(lwt, "workerTemplate", trimPodTemplate);
      inMember(lwt, "leaderTemplate", trimPodTemplate);
    });
  });
}

void trimScale(json& scale) {
  keepOnly(scale, {"apiVersion", "kind", "metadata", "spec", "status"});
  inMember(scale, "spec", [](json& spec) { keepOnly(spec, {"replicas"}); });
  inMember(scale, "status", [](json& status) { keepOnly(status, {"replicas", "selector"}); });
}

void trimHpa(json& hpa) {
  keepOnly(hpa, {"apiVersion", "kind", "metadata", "spec", "status"});
  inMember(hpa, "status", [](json& status) {
    keepOnly(status, {"currentReplicas", "desiredReplicas", "currentMetrics", "conditions"});
    keepInEach(status, "conditions", {"type", "status", "reason"});
  });
}

// A ResourceClaim's or ResourceClaimTemplate's claim spec: its device requests and constraints (of
// which only their presence is read); not the opaque driver config.
void trimClaimSpec(json& spec) {
  keepOnly(spec, {"devices"});
  inMember(spec, "devices", [](json& devices) { keepOnly(devices, {"requests", "constraints"}); });
}

void trimResourceSlice(json& slice) {
  keepOnly(slice, {"apiVersion", "kind", "metadata", "spec"});
  inMember(slice, "spec", [](json& spec) {
    keepOnly(spec, {"driver", "pool", "nodeName", "devices", "sharedCounters"});
    keepInEach(spec, "devices",
               {"name", "attributes", "capacity", "consumesCounters", "allowMultipleAllocations",
                "taints"});
    inMember(spec, "devices", [](json& devices) {
      if (!devices.is_array()) return;
      for (json& d : devices) {
        inMember(d, "capacity", [](json& capacity) {
          if (!capacity.is_object()) return;
          for (auto& [_, c] : capacity.items()) keepOnly(c, {"value"});
        });
        keepInEach(d, "taints", {"effect"});
      }
    });
  });
}

void trimResourceClaim(json& claim) {
  keepOnly(claim, {"apiVersion", "kind", "metadata", "spec", "status"});
  inMember(claim, "spec", trimClaimSpec);
  inMember(claim, "status", [](json& status) {
    keepOnly(status, {"allocation", "reservedFor"});
    inMember(status, "allocation", [](json& allocation) {
      keepOnly(allocation, {"devices"});
      inMember(allocation, "devices", [](json& devices) {
        keepOnly(devices, {"results"});
        keepInEach(devices, "results", {"request", "driver", "pool", "device"});
      });
    });
    keepInEach(status, "reservedFor", {"resource", "name"});
  });
}

// The DRA kinds (dra_objects.h); false for any other kind.
bool trimDra(std::string_view kind, json& object) {
  if (kind == "ResourceSlice") {
    trimResourceSlice(object);
  } else if (kind == "DeviceClass") {
    keepOnly(object, {"apiVersion", "kind", "metadata", "spec"});
    inMember(object, "spec", [](json& spec) {
      keepOnly(spec, {"selectors", "extendedResourceName"});
    });
  } else if (kind == "ResourceClaimTemplate") {
    keepOnly(object, {"apiVersion", "kind", "metadata", "spec"});
    inMember(object, "spec", [](json& spec) {
      keepOnly(spec, {"spec"});
      inMember(spec, "spec", trimClaimSpec);
    });
  } else if (kind == "ResourceClaim") {
    trimResourceClaim(object);
  } else {
    return false;
  }
  return true;
}

// A GPUCapacityRequest (capacity_request.h): its reader also reads metadata.generation.
void trimCapacityRequest(json& request) {
  keepOnly(request, {"apiVersion", "kind", "metadata", "spec", "status"});
  inMember(request, "spec", [](json& spec) {
    keepOnly(spec, {"workloadRef", "resource", "replicas", "priority"});
    inMember(spec, "workloadRef", [](json& ref) { keepOnly(ref, {"apiVersion", "kind", "name"}); });
  });
  inMember(request, "status", [](json& status) {
    keepOnly(status, {"grantedReplicas", "observedGeneration", "conditions"});
    keepInEach(status, "conditions", {"type", "status", "reason", "message"});
  });
  json generation;
  inMember(request, "metadata", [&](json& meta) {
    if (auto it = meta.find("generation"); it != meta.end()) generation = *it;
  });
  trimMetadata(request, false);
  if (!generation.is_null()) request["metadata"]["generation"] = std::move(generation);
}

}  // namespace

bool keepsAnnotation(std::string_view key) { return key.starts_with("gpuscale.io/"); }

json keepReadFields(std::string_view kind, json object) {
  if (!object.is_object()) return object;
  const bool hpa = kind == "HorizontalPodAutoscaler";
  if (kind == "Node") {
    trimNode(object);
  } else if (kind == "Pod") {
    trimPod(object);
  } else if (kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet") {
    trimWorkload(object);
  } else if (hpa) {
    trimHpa(object);
  } else if (kind == "ConfigMap") {
    keepOnly(object, {"apiVersion", "kind", "metadata", "data"});
  } else if (kind == "Scale") {
    trimScale(object);
  } else if (kind == "GPUCapacityRequest") {
    trimCapacityRequest(object);
    return object;
  } else if (!trimDra(kind, object)) {
    return object;
  }
  trimMetadata(object, hpa);
  return object;
}

json keepScalableWorkloadFields(std::string_view kind, json object) {
  if (!object.is_object()) return object;
  if (kind == "LeaderWorkerSet") {
    trimLeaderWorkerSet(object);
  } else {
    trimWorkload(object);
  }
  trimMetadata(object, false);
  return object;
}

}  // namespace gpuscale::partition
