#include "gpuscale/partition/read_fields.h"

#include <gtest/gtest.h>

#include "dra_objects.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace read_fields_test {

using testing::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

json seconds(const std::optional<TimePoint>& t) {
  if (!t) return json();
  return std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count();
}

json kept(const Labels& annotations) {
  json out = json::object();
  for (const auto& [k, v] : annotations) {
    if (keepsAnnotation(k)) out[k] = v;
  }
  return out;
}

json need(const GpuMemoryNeed& n) { return {static_cast<int>(n.kind), n.value, n.source}; }

json meta(const ObjectMeta& m) {
  return {m.ns,       m.name,
          m.uid,      m.resourceVersion,
          m.labels,   kept(m.annotations),
          m.deleting, seconds(m.createdAt)};
}

json typed(const NodeObject& n) {
  json taints = json::array();
  for (const auto& t : n.taints) taints.push_back({t.key, t.value, t.effect, t.timeAdded});
  return {meta(n.meta), n.unschedulable, taints, n.allocatable};
}

json claims(const std::vector<PodClaimRef>& refs) {
  json out = json::array();
  for (const auto& r : refs) out.push_back({r.name, r.templateName, r.claimName});
  return out;
}

json typed(const PodState& p) {
  return {p.ns,
          p.name,
          p.labels,
          p.nodeName,
          p.phase,
          p.ready,
          p.terminating,
          p.gpuRequests,
          p.resourceClaims,
          claims(p.claims),
          p.claimsUnallocatable,
          p.gpuUse,
          p.insufficientResource,
          p.nominated,
          p.unschedulable,
          seconds(p.startedAt),
          need(p.gpuMemory),
          opt(p.priority)};
}

json typed(const ScaleTarget& t) {
  json requirements = json::array();
  for (const auto& r : t.selectorRequirements) requirements.push_back(r.toString());
  return {t.kind,
          t.ns,
          t.name,
          t.uid,
          t.specReplicas,
          t.selector,
          requirements,
          t.podsPerReplica,
          t.gpuRequests,
          t.nodeSelector,
          claims(t.claims),
          need(t.gpuMemory),
          t.templateFromPods};
}

json typed(const HpaState& h) {
  json controller;
  if (h.controller) {
    controller = {h.controller->apiVersion, h.controller->kind, h.controller->name,
                  h.controller->uid};
  }
  json conditions = json::array(), metrics = json::array();
  for (const auto& c : h.conditions) conditions.push_back({c.type, c.status, c.reason});
  for (const auto& m : h.metrics)
    metrics.push_back({m.type, m.key, m.targetType, m.target, opt(m.current)});
  return {h.ns,
          h.name,
          h.uid,
          h.labels,
          kept(h.annotations),
          h.targetApiVersion,
          h.targetKind,
          h.targetName,
          h.minReplicas,
          h.maxReplicas,
          controller,
          h.currentReplicas,
          h.desiredReplicas,
          conditions,
          metrics,
          opt(h.scaleUpTolerance)};
}

json typed(const ConfigMapObject& c) { return {meta(c.meta), c.data}; }

json typed(const DraValue& v) { return {static_cast<int>(v.type), v.text, v.number, v.flag}; }

json typed(const DraClaimSpec& spec) {
  json requests = json::array();
  for (const auto& r : spec.requests) {
    json alternatives = json::array();
    for (const auto& a : r.alternatives) {
      alternatives.push_back({a.name, a.deviceClassName, a.selectors, a.allocationMode, a.count,
                              a.adminAccess, a.consumesCapacity});
    }
    requests.push_back({r.name, alternatives, r.firstAvailable});
  }
  return {requests, spec.constraints};
}

json typed(const ResourceSliceObject& s) {
  json devices = json::array(), counters = json::array();
  for (const auto& d : s.devices) {
    json attributes = json::object(), uses = json::array();
    for (const auto& [k, v] : d.attributes) attributes[k] = typed(v);
    for (const auto& u : d.consumesCounters) uses.push_back({u.counterSet, u.counters});
    devices.push_back(
        {d.name, attributes, d.capacity, uses, d.allowMultipleAllocations, d.tainted});
  }
  for (const auto& c : s.sharedCounters) counters.push_back({c.name, c.counters});
  return {meta(s.meta), s.driver,     s.pool,  s.nodeName,
          s.generation, s.sliceCount, devices, counters};
}

json typed(const DeviceClassObject& c) {
  return {meta(c.meta), c.selectors, c.extendedResourceName};
}

json typed(const ResourceClaimTemplateObject& t) { return {meta(t.meta), typed(t.spec)}; }

json typed(const ResourceClaimObject& c) {
  json allocated = json::array();
  for (const auto& a : c.allocated) allocated.push_back({a.request, a.driver, a.pool, a.device});
  return {meta(c.meta), typed(c.spec), allocated, c.reservedForPods};
}

// The typed value the kind's reader gives for `object`, or its error.
template <typename T>
json orError(const core::Result<T>& r) {
  if (!r) return {{"error", r.status().message()}};
  return typed(*r);
}

json read(const std::string& kind, const json& object) {
  if (kind == "Node") return orError(readNode(object));
  if (kind == "Pod") return orError(readPod(object));
  if (kind == "HorizontalPodAutoscaler") return orError(readHpa(object));
  if (kind == "ConfigMap") return orError(readConfigMap(object));
  if (kind == "ResourceSlice") return orError(readResourceSlice(object));
  if (kind == "DeviceClass") return orError(readDeviceClass(object));
  if (kind == "ResourceClaimTemplate") return orError(readResourceClaimTemplate(object));
  if (kind == "ResourceClaim") return orError(readResourceClaim(object));
  return orError(readWorkload(object, kind));
}

// `object` with what a real cluster adds and no reader looks at.
json padded(json object) {
  const std::string kind = object.value("kind", "");
  json& m = object["metadata"];
  m["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = object.dump();
  m["annotations"]["deployment.kubernetes.io/revision"] = "3";
  m["managedFields"] = json::array({{{"manager", "kubectl"},
                                     {"operation", "Update"},
                                     {"fieldsV1", {{"f:spec", json::object()}}}}});
  m["generation"] = 4;
  m["finalizers"] = json::array({"example.com/keep"});
  auto padPodSpec = [](json& spec) {
    spec["volumes"] = json::array({{{"name", "models"}, {"emptyDir", json::object()}}});
    spec["tolerations"] = json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}});
    spec["serviceAccountName"] = "default";
    for (auto& c : spec["containers"]) {
      c["env"] = json::array({{{"name", "MODEL"}, {"value", std::string(200, 'm')}}});
      c["volumeMounts"] = json::array({{{"name", "models"}, {"mountPath", "/models"}}});
      c["ports"] = json::array({{{"containerPort", 8000}}});
      c["imagePullPolicy"] = "IfNotPresent";
    }
  };
  if (kind == "Pod") {
    if (object.contains("spec")) padPodSpec(object["spec"]);
    m["ownerReferences"] = json::array({{{"kind", "ReplicaSet"}, {"name", "rs"}}});
    object["status"]["hostIP"] = "10.0.0.1";
    object["status"]["qosClass"] = "Burstable";
    object["status"]["containerStatuses"] = json::array({{{"name", "triton"}, {"ready", true}}});
    for (auto& c : object["status"]["conditions"]) c["lastTransitionTime"] = "2026-11-22T00:00:00Z";
    object["status"]["conditions"].push_back({{"type", "Initialized"}, {"status", "True"}});
  } else if (kind == "Node") {
    object["spec"]["podCIDR"] = "10.244.1.0/24";
    object["status"]["allocatable"]["cpu"] = "64";
    object["status"]["allocatable"]["memory"] = "512Gi";
    object["status"]["capacity"] = object["status"]["allocatable"];
    object["status"]["images"] = json::array({{{"names", {"nvcr.io/nvidia/tritonserver"}}}});
    object["status"]["nodeInfo"] = {{"kubeletVersion", "v1.33.0"}};
  } else if (kind == "Deployment" || kind == "StatefulSet") {
    object["spec"]["strategy"] = {{"type", "RollingUpdate"}};
    object["spec"]["template"]["metadata"]["labels"]["extra"] = "label";
    object["spec"]["template"]["metadata"]["annotations"]["prometheus.io/scrape"] = "true";
    padPodSpec(object["spec"]["template"]["spec"]);
    object["status"] = {{"replicas", 3}, {"readyReplicas", 3}, {"observedGeneration", 4}};
  } else if (kind == "HorizontalPodAutoscaler") {
    object["status"]["lastScaleTime"] = "2026-11-22T00:00:00Z";
    for (auto& c : object["status"]["conditions"]) c["message"] = "the HPA was able to ...";
  } else if (kind == "ResourceSlice") {
    m["ownerReferences"] = json::array({{{"kind", "Node"}, {"name", "n"}}});
    for (auto& d : object["spec"]["devices"]) {
      for (auto& [_, c] : d["capacity"].items()) c["requestPolicy"] = {{"default", "1Gi"}};
      d["taints"] = json::array({{{"key", "k"},
                                  {"value", "v"},
                                  {"effect", "None"},
                                  {"timeAdded", "2026-11-22T00:00:00Z"}}});
      d["bindingConditions"] = json::array({"example.com/ready"});
    }
  } else if (kind == "DeviceClass") {
    object["spec"]["config"] = json::array({{{"opaque", {{"driver", "gpu.nvidia.com"}}}}});
  } else if (kind == "ResourceClaimTemplate") {
    object["spec"]["spec"]["devices"]["config"] =
        json::array({{{"opaque", {{"driver", "gpu.nvidia.com"}}}}});
  } else if (kind == "ResourceClaim") {
    m["ownerReferences"] = json::array({{{"kind", "Pod"}, {"name", "p"}}});
    object["spec"]["devices"]["config"] =
        json::array({{{"opaque", {{"driver", "gpu.nvidia.com"}}}}});
    if (object.contains("status")) {
      object["status"]["devices"] = json::array({{{"driver", "gpu.nvidia.com"}}});
      object["status"]["allocation"]["nodeSelector"] = {{"nodeSelectorTerms", json::array()}};
      object["status"]["allocation"]["devices"]["config"] = json::array({{{"source", "Class"}}});
      for (auto& r : object["status"]["allocation"]["devices"]["results"]) r["adminAccess"] = false;
      for (auto& r : object["status"]["reservedFor"]) r["uid"] = "u";
    }
  }
  return object;
}

// The planner's plan for `dump` under the default policies, as JSON.
std::string planOf(const json& dump) {
  ClusterSnapshot snap = testing::snapshotOf(dump);
  const PolicySet policies = defaultPolicies();
  auto workloads = assessWorkloads(snap, policies);
  return planToJson(planPartitions(snap, workloads, *core::parseRfc3339("2026-11-22T01:00:00Z")))
      .dump();
}

std::vector<json> itemsOf(const json& dump) {
  return dump.is_object() && dump.contains("items") ? dump["items"].get<std::vector<json>>()
                                                    : dump.get<std::vector<json>>();
}

// Every object of the seed dumps, padded as a real cluster would return it, reads to the same
// typed value (or error) trimmed as whole.
TEST(ReadFieldsTest, SeedDumpsReadTheSameTrimmed) {
  for (const char* seed : {"a100_1g_stuck.json", "a100_balanced_timeslicing.json",
                           "a100_idle_reshape.json", "t4_timeslicing.json"}) {
    json full = json::array(), trimmed = json::array();
    for (const json& item : itemsOf(testing::loadDump(seed))) {
      const std::string kind = item.value("kind", "");
      json object = padded(item);
      json small = keepReadFields(kind, object);
      EXPECT_EQ(read(kind, small), read(kind, object))
          << seed << " " << kind << " " << item["metadata"];
      for (const char* gone :
           {"managedFields", "last-applied-configuration", "\"env\"", "\"volumes\"",
            "containerStatuses", "\"images\"", "readyReplicas", "Initialized"}) {
        EXPECT_EQ(small.dump().find(gone), std::string::npos) << seed << " " << kind << " " << gone;
      }
      full.push_back(std::move(object));
      trimmed.push_back(std::move(small));
    }
    // And the whole pass over them plans the same.
    EXPECT_EQ(planOf(trimmed), planOf(full)) << seed;
    EXPECT_LT(trimmed.dump().size(), full.dump().size() / 2) << seed;
  }
}

// The DRA kinds of a mixed cluster (device-plugin and DRA nodes, static and partitionable), padded
// as kube-apiserver returns them, read to the same typed values trimmed, and the pass plans the
// same on them.
TEST(ReadFieldsTest, DraObjectsReadTheSameTrimmed) {
  json full = json::array(), trimmed = json::array();
  for (const json& item : itemsOf(testing::draMixedCluster())) {
    const std::string kind = item.value("kind", "");
    json object = padded(item);
    json small = keepReadFields(kind, object);
    EXPECT_EQ(read(kind, small), read(kind, object)) << kind << " " << item["metadata"];
    if (kind.starts_with("Resource") || kind == "DeviceClass") {
      for (const char* gone : {"managedFields", "requestPolicy", "bindingConditions", "opaque",
                               "nodeSelectorTerms", "timeAdded", "ownerReferences"}) {
        EXPECT_EQ(small.dump().find(gone), std::string::npos) << kind << " " << gone;
      }
    }
    full.push_back(std::move(object));
    trimmed.push_back(std::move(small));
  }
  EXPECT_EQ(planOf(trimmed), planOf(full));
  EXPECT_NE(planOf(full).find("claims-app"), std::string::npos) << planOf(full);
}

// Hand-made objects: what a reader reads survives, a field of an unexpected shape is kept whole
// (the reader's error is the same), kinds without a rule are untouched.
TEST(ReadFieldsTest, EachKindKeepsWhatItsReaderReads) {
  const json sidecarPod = padded(json::parse(R"({"kind": "Pod",
    "metadata": {"name": "p", "namespace": "a", "uid": "u1", "labels": {"app": "x"},
      "deletionTimestamp": "2026-11-22T00:00:00Z",
      "annotations": {"gpuscale.io/gpu-memory": "20Gi", "gpuscale.io/sim-gpu": "1"}},
    "spec": {"nodeName": "n1", "priority": 1000, "nodeSelector": {"nvidia.com/gpu.product": "T4"},
      "resources": {"limits": {"nvidia.com/gpu": "1"}},
      "resourceClaims": [{"name": "gpu"}],
      "initContainers": [{"name": "side", "restartPolicy": "Always", "image": "i",
        "resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}}],
      "containers": [{"name": "c", "image": "vllm", "command": ["vllm", "serve"],
        "args": ["--gpu-memory-utilization", "0.5"],
        "resources": {"limits": {"nvidia.com/gpu": "2"}, "claims": [{"name": "gpu"}]}}]},
    "status": {"phase": "Pending", "nominatedNodeName": "n2", "startTime": "2026-11-22T00:00:00Z",
      "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}})"));
  const json kedaHpa = padded(json::parse(R"({"kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "h", "namespace": "a", "uid": "u2",
      "annotations": {"gpuscale.io/partition-policy": "p", "gpuscale.io/status": "{}"},
      "ownerReferences": [{"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "name": "so",
        "uid": "u3", "controller": true}]},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s"},
      "minReplicas": 2, "maxReplicas": 4,
      "behavior": {"scaleUp": {"tolerance": "50m"}},
      "metrics": [{"type": "External", "external": {"metric": {"name": "q"},
        "target": {"type": "Value", "value": "10"}}}]},
    "status": {"currentReplicas": 4, "desiredReplicas": 4,
      "currentMetrics": [{"type": "External", "external": {"metric": {"name": "q"},
        "current": {"value": "30"}}}],
      "conditions": [{"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas"}]}})"));
  const json taintedNode = padded(json::parse(R"({"kind": "Node",
    "metadata": {"name": "n1", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
      "annotations": {"gpuscale.io/intent": "{}", "gpuscale.io/backoff-until": "x",
        "node.alpha.kubernetes.io/ttl": "0"}},
    "spec": {"unschedulable": true, "taints": [{"key": "gpuscale.io/reshape", "effect":
      "NoSchedule", "timeAdded": "2026-11-22T00:00:00Z"}]},
    "status": {"allocatable": {"nvidia.com/mig-1g.5gb": "7", "nvidia.com/gpu": "0"}}})"));
  const json statefulSet = padded(json::parse(R"({"kind": "StatefulSet",
    "metadata": {"name": "s", "namespace": "a", "uid": "u4"},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "s"}},
      "template": {"metadata": {"annotations": {"gpuscale.io/gpu-memory-fraction": "0.5"}},
        "spec": {"nodeSelector": {"k": "v"}, "containers": [{"name": "c",
          "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}})"));
  const struct {
    const char* what;
    std::string kind;
    json object;
  } cases[] = {
      {"sidecar, claims, memory annotation, unschedulable", "Pod", sidecarPod},
      {"KEDA-owned HPA with an External metric", "HorizontalPodAutoscaler", kedaHpa},
      {"tainted node with an intent", "Node", taintedNode},
      {"StatefulSet with a memory fraction", "StatefulSet", statefulSet},
      {"ConfigMap", "ConfigMap",
       json::parse(R"({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "g",
         "managedFields": [{}]}, "data": {"config.yaml": "version: v1"}, "binaryData": {}})")},
      {"containers not a list", "Pod",
       json::parse(R"({"metadata": {"name": "p"}, "spec": {"containers": "c", "volumes": []}})")},
      {"condition type not a string", "Pod",
       json::parse(R"({"metadata": {"name": "p"}, "status": {"conditions": [{"type": 1},
         {"type": "Initialized", "status": 2}]}})")},
      {"annotation not a string", "Pod",
       json::parse(R"({"metadata": {"name": "p", "annotations": {"other": 1}}})")},
      {"allocatable not an object", "Node",
       json::parse(
           R"({"metadata": {"name": "n"}, "status": {"allocatable": ["nvidia.com/gpu"]}})")},
      {"spec not an object", "Deployment",
       json::parse(R"({"metadata": {"name": "d"}, "spec": 3, "status": {}})")},
      {"status conditions not objects", "HorizontalPodAutoscaler",
       json::parse(R"({"metadata": {"name": "h"}, "spec": {}, "status": {"conditions": [1]}})")},
  };
  for (const auto& c : cases) {
    const json small = keepReadFields(c.kind, c.object);
    EXPECT_EQ(read(c.kind, small), read(c.kind, c.object)) << c.what;
    EXPECT_EQ(small.dump().find("managedFields"), std::string::npos) << c.what;
  }
  const json lease = {{"kind", "Lease"}, {"metadata", {{"managedFields", json::array()}}}};
  EXPECT_EQ(keepReadFields("Lease", lease), lease);
}

// A Scale, and workloads HPAs scale through /scale (a LeaderWorkerSet; any other kind read as a
// Deployment-like one with the pods-per-replica annotation), read the same trimmed.
TEST(ReadFieldsTest, ScalesAndScalableWorkloadsReadTheSameTrimmed) {
  const json scale = padded(json::parse(R"({"kind": "Scale", "apiVersion": "autoscaling/v1",
    "metadata": {"name": "big", "namespace": "a", "uid": "u5", "resourceVersion": "7"},
    "spec": {"replicas": 2},
    "status": {"replicas": 2, "selector": "app in (big),tier=gpu", "extra": 1}})"));
  auto typedScale = [](const json& o) {
    auto r = readScale(o);
    return r ? json{meta(r->meta), r->specReplicas, r->statusReplicas, r->selector}
             : json{{"error", r.status().message()}};
  };
  const json smallScale = keepReadFields("Scale", scale);
  EXPECT_EQ(typedScale(smallScale), typedScale(scale));
  EXPECT_EQ(smallScale.dump().find("extra"), std::string::npos);
  EXPECT_EQ(smallScale.dump().find("managedFields"), std::string::npos);

  const json lws = padded(json::parse(R"({"kind": "LeaderWorkerSet",
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "metadata": {"name": "big", "namespace": "a", "uid": "u5"},
    "spec": {"replicas": 2, "startupPolicy": "LeaderCreated",
      "leaderWorkerTemplate": {"size": 4, "restartPolicy": "RecreateGroupOnPodRestart",
        "leaderTemplate": {"spec": {"containers": [{"name": "l", "env": [{"name": "x"}],
          "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}},
        "workerTemplate": {"metadata": {"annotations": {"gpuscale.io/gpu-memory": "20Gi"}},
          "spec": {"containers": [{"name": "w",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}},
    "status": {"replicas": 2, "hpaPodSelector": "x=y"}})"));
  const json custom = padded(json::parse(R"({"kind": "InferencePool",
    "apiVersion": "example.com/v1",
    "metadata": {"name": "pool", "namespace": "a", "uid": "u6",
      "annotations": {"gpuscale.io/pods-per-replica": "3"}},
    "spec": {"replicas": 1, "model": "m", "template": {"spec": {"containers": [{"name": "c",
      "resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}}]}}}})"));
  const auto scaleObject = readScale(scale);
  ASSERT_TRUE(scaleObject.ok());
  for (const json* o : {&lws, &custom}) {
    const std::string kind = (*o)["kind"];
    const json small = keepScalableWorkloadFields(kind, *o);
    auto typedOf = [&](const json& x) {
      auto r = readScalableWorkload(x, kind, &*scaleObject);
      return r ? typed(*r) : json{{"error", r.status().message()}};
    };
    EXPECT_EQ(typedOf(small), typedOf(*o)) << kind;
    for (const char* gone : {"managedFields", "\"env\"", "startupPolicy", "\"model\"", "status"}) {
      EXPECT_EQ(small.dump().find(gone), std::string::npos) << kind << " " << gone;
    }
  }
}

// A GPUCapacityRequest (both shapes) reads the same trimmed, generation included, and sheds what
// no reader reads.
TEST(ReadFieldsTest, CapacityRequestsReadTheSameTrimmed) {
  const json status = json::parse(R"({"grantedReplicas": 2, "observedGeneration": 3,
    "conditions": [{"type": "Granted", "status": "False", "reason": "PartiallyGranted",
                    "message": "2 of 4", "lastTransitionTime": "2026-11-22T00:00:00Z"}]})");
  const std::vector<json> specs{
      json::parse(R"({"resource": "nvidia.com/mig-1g.5gb", "replicas": 4, "priority": 7})"),
      json::parse(R"({"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment",
        "name": "triton", "extra": 1}, "replicas": 4, "note": "x"})"),
  };
  for (const json& spec : specs) {
    json object = padded({{"apiVersion", "gpuscale.io/v1alpha1"},
                          {"kind", "GPUCapacityRequest"},
                          {"metadata", {{"name", "r"}, {"namespace", "a"}, {"uid", "u"}}},
                          {"spec", spec},
                          {"status", status}});
    const json small = keepReadFields("GPUCapacityRequest", object);
    auto full = readCapacityRequest(object);
    auto trimmed = readCapacityRequest(small);
    ASSERT_TRUE(full.ok() && trimmed.ok()) << small;
    EXPECT_EQ(trimmed->generation, 4);
    EXPECT_EQ(trimmed->generation, full->generation);
    EXPECT_EQ(trimmed->resource, full->resource);
    EXPECT_EQ(trimmed->workloadKind, full->workloadKind);
    EXPECT_EQ(trimmed->workloadName, full->workloadName);
    EXPECT_EQ(trimmed->replicas, full->replicas);
    EXPECT_EQ(trimmed->priority, full->priority);
    EXPECT_EQ(trimmed->grantedReplicas, full->grantedReplicas);
    EXPECT_EQ(trimmed->observedGeneration, full->observedGeneration);
    EXPECT_EQ(trimmed->conditions, full->conditions);
    EXPECT_EQ(trimmed->meta.uid, full->meta.uid);
    for (const char* gone :
         {"managedFields", "finalizers", "lastTransitionTime", "extra", "note"}) {
      EXPECT_EQ(small.dump().find(gone), std::string::npos) << gone;
    }
  }
}

}  // namespace read_fields_test
}  // namespace gpuscale::partition
