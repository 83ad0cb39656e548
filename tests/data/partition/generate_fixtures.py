#!/usr/bin/env python3
"""Writes the seed-scenario dumps in this folder: what `kubectl get nodes,pods,hpa,deployments,configmaps -A
-o json` returns for each scenario (mixed_dra.json adds resourceslices,deviceclasses,resourceclaimtemplates,
resourceclaims). Run it after changing a scenario; the JSON files are committed."""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
MIG_PARTED_DEFAULT = (HERE / "mig-parted-default-config.yaml").read_text()
CREATED = "2026-11-21T22:00:00Z"


def meta(name, namespace=None, labels=None, annotations=None, uid_seed=0):
    m = {"name": name, "uid": f"00000000-0000-4000-8000-{uid_seed:012d}", "resourceVersion": str(1000 + uid_seed),
         "creationTimestamp": CREATED}
    if namespace:
        m["namespace"] = namespace
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    return m


def node(name, labels, gpu_allocatable, seed):
    base = {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.device-plugin": "true",
            "nvidia.com/gpu.deploy.gpu-feature-discovery": "true", "nvidia.com/gpu.deploy.dcgm-exporter": "true",
            "nvidia.com/cuda.driver-version.full": "570.133.20"}
    base.update(labels)
    alloc = {"cpu": "63", "ephemeral-storage": "846336990003", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
             "memory": "527839620Ki", "pods": "110"}
    alloc.update(gpu_allocatable)
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta(name, labels=base, uid_seed=seed),
            "spec": {"podCIDR": f"10.244.{seed}.0/24"},
            "status": {"capacity": dict(alloc), "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status",
                                       "lastHeartbeatTime": "2026-11-22T00:40:00Z",
                                       "lastTransitionTime": CREATED}],
                       "nodeInfo": {"kubeletVersion": "v1.34.1", "kernelVersion": "6.1.0-27-amd64",
                                    "containerRuntimeVersion": "containerd://1.7.24", "architecture": "amd64",
                                    "operatingSystem": "linux"}}}


def container(resource, count):
    return {"name": "triton", "image": "nvcr.io/nvidia/tritonserver:25.10-py3",
            "args": ["tritonserver", "--model-repository=/models"],
            "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"},
                      {"containerPort": 8002, "name": "metrics", "protocol": "TCP"}],
            "resources": {"limits": {resource: str(count)}, "requests": {"cpu": "2", resource: str(count)}}}


def deployment(namespace, name, replicas, resource, seed, node_selector=None):
    spec = {"containers": [container(resource, 1)]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": meta(name, namespace, labels={"app": name}, uid_seed=seed),
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
            "status": {"replicas": replicas, "observedGeneration": 3}}


def pod(namespace, app, index, resource, node_name, seed, pending_message=None):
    name = f"{app}-7d9c5b6f4-{index:05d}"
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": meta(name, namespace, labels={"app": app, "pod-template-hash": "7d9c5b6f4"}, uid_seed=seed),
         "spec": {"containers": [container(resource, 1)], "schedulerName": "default-scheduler"}}
    if pending_message:
        p["status"] = {"phase": "Pending", "qosClass": "Burstable",
                       "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                       "message": pending_message, "lastTransitionTime": "2026-11-22T00:35:00Z"}]}
    else:
        p["spec"]["nodeName"] = node_name
        p["status"] = {"phase": "Running", "qosClass": "Burstable", "hostIP": "10.0.0.10",
                       "podIP": f"10.244.1.{index + 10}", "startTime": CREATED,
                       "conditions": [{"type": "PodScheduled", "status": "True"},
                                      {"type": "Initialized", "status": "True"},
                                      {"type": "ContainersReady", "status": "True"},
                                      {"type": "Ready", "status": "True"}]}
    return p


def hpa(namespace, name, min_r, max_r, current, desired, average, target, limited, seed, policy="default"):
    conditions = [
        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
         "message": "recommended size matches current size", "lastTransitionTime": "2026-11-22T00:20:00Z"},
        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
         "message": "the HPA was able to successfully calculate a replica count from pods metric avg_time_queue_us",
         "lastTransitionTime": "2026-11-22T00:00:00Z"}]
    if limited:
        conditions.append({"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas",
                           "message": "the desired replica count is more than the maximum replica count",
                           "lastTransitionTime": "2026-11-22T00:25:00Z"})
    else:
        conditions.append({"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
                           "message": "the desired count is within the acceptable range",
                           "lastTransitionTime": "2026-11-22T00:25:00Z"})
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta(name, namespace, annotations={"gpuscale.io/partition-policy": policy}, uid_seed=seed),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "minReplicas": min_r, "maxReplicas": max_r,
                     "metrics": [{"type": "Pods", "pods": {"metric": {"name": "avg_time_queue_us"},
                                                           "target": {"type": "AverageValue",
                                                                      "averageValue": target}}}]},
            "status": {"currentReplicas": current, "desiredReplicas": desired,
                       "lastScaleTime": "2026-11-22T00:25:00Z",
                       "currentMetrics": [{"type": "Pods", "pods": {"metric": {"name": "avg_time_queue_us"},
                                                                    "current": {"averageValue": average}}}],
                       "conditions": conditions}}


def config_map(namespace, name, data, seed):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name, namespace, uid_seed=seed), "data": data}


def mig_node(name, product, memory, gpus, config, counts, seed, plugin_config=None, replicas=None):
    labels = {"nvidia.com/gpu.product": product, "nvidia.com/gpu.memory": str(memory),
              "nvidia.com/gpu.count": str(gpus), "nvidia.com/gpu.family": "ampere", "nvidia.com/mig.capable": "true",
              "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": config,
              "nvidia.com/mig.config.state": "success", "nvidia.com/gpu.deploy.mig-manager": "true"}
    alloc = {"nvidia.com/gpu": "0"}
    for profile, count in counts.items():
        r = (replicas or {}).get(profile, 1)
        labels[f"nvidia.com/mig-{profile}.count"] = str(count)
        alloc[f"nvidia.com/mig-{profile}"] = str(count * r)
        if r > 1:
            labels[f"nvidia.com/mig-{profile}.replicas"] = str(r)
            labels[f"nvidia.com/mig-{profile}.sharing-strategy"] = "time-slicing"
    if plugin_config:
        labels["nvidia.com/device-plugin.config"] = plugin_config
    return node(name, labels, alloc, seed)


def kubectl_list(items):
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


OPERATOR_CMS = [config_map("gpu-operator", "default-mig-parted-config", {"config.yaml": MIG_PARTED_DEFAULT}, 900)]
INSUFFICIENT_GPU = ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node "
                    "affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for "
                    "incoming pod, 1 Preemption is not helpful for scheduling.")


def a100_stuck(extra_nodes=()):
    res = "nvidia.com/mig-1g.5gb"
    items = [mig_node("a100-node-1", "NVIDIA-A100-SXM4-40GB", 40960, 1, "all-1g.5gb", {"1g.5gb": 7}, 1)]
    items += list(extra_nodes)
    items += [pod("default", "triton", i, res, "a100-node-1", 100 + i) for i in range(7)]
    items += [deployment("default", "triton", 7, res, 50),
              hpa("default", "triton", 1, 7, 7, 7, "399300m", "50", True, 60)]
    return kubectl_list(items + OPERATOR_CMS)


def t4_timeslicing():
    res = "nvidia.com/gpu"
    t4 = node("t4-node-1", {"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.memory": "15360",
                            "nvidia.com/gpu.count": "1", "nvidia.com/gpu.family": "turing",
                            "nvidia.com/mig.capable": "false"}, {"nvidia.com/gpu": "1"}, 2)
    cpu = node("cpu-node-1", {"nvidia.com/gpu.present": "false"}, {}, 3)
    # Not nvidia.com/gpu.product: the scheduler matches it exactly and time-slicing renames it
    # Tesla-T4-SHARED, so pods pinned to "Tesla-T4" could not land after the raise.
    sel = {"nvidia.com/gpu.family": "turing"}
    items = [t4, cpu, pod("default", "triton-t4", 0, res, "t4-node-1", 200)]
    items += [pod("default", "triton-t4", i, res, "", 200 + i, INSUFFICIENT_GPU) for i in range(1, 4)]
    items += [deployment("default", "triton-t4", 4, res, 51, sel),
              hpa("default", "triton-t4", 1, 14, 4, 4, "1000", "50", False, 61, policy="t4-inference"),
              config_map("gpu-operator", "time-slicing-config",
                         {"a100-40gb": "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n"
                                       "    resources:\n    - name: nvidia.com/mig-1g.5gb\n      replicas: 2\n"}, 901)]
    return kubectl_list(items + OPERATOR_CMS)


def a100_balanced():
    counts = {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    replicas = {"1g.5gb": 2, "2g.10gb": 2, "3g.20gb": 2}
    items = [mig_node("a100-node-2", "NVIDIA-A100-PCIE-40GB", 40960, 1, "all-balanced", counts, 4,
                      plugin_config="a100-balanced-ts", replicas=replicas)]
    seed = 300
    for app, profile, n, avg, limited in [("llm-small", "1g.5gb", 4, "150", True),
                                          ("llm-medium", "2g.10gb", 2, "80", True),
                                          ("llm-large", "3g.20gb", 2, "52", False)]:
        res = f"nvidia.com/mig-{profile}"
        items += [pod("default", app, i, res, "a100-node-2", seed + i) for i in range(n)]
        items += [deployment("default", app, n, res, seed + 50),
                  hpa("default", app, 1, n, n, n, avg, "50", limited, seed + 60)]
        seed += 100
    ts = ("version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    renameByDefault: false\n"
          "    failRequestsGreaterThanOne: true\n    resources:\n"
          "    - name: nvidia.com/mig-1g.5gb\n      replicas: 2\n"
          "    - name: nvidia.com/mig-2g.10gb\n      replicas: 2\n"
          "    - name: nvidia.com/mig-3g.20gb\n      replicas: 2\n")
    items.append(config_map("gpu-operator", "time-slicing-config", {"a100-balanced-ts": ts}, 902))
    return kubectl_list(items + OPERATOR_CMS)


DRA_DRIVER = "gpu.nvidia.com"
DRA_PRODUCT = "NVIDIA A100-SXM4-40GB"
# NVML's numbers for the A100-SXM4-40GB profiles the mixed dump publishes: GI profile ID, memory,
# memory slices, multiprocessors.
DRA_PROFILES = {"1g.5gb": (19, "4864Mi", 1, 14), "3g.20gb": (9, "19968Mi", 4, 42)}


def dra_node(name, mig_config, seed):
    """A GPU node whose GPU NVIDIA's DRA driver publishes: GFD's and mig-manager's labels, no nvidia.com/
    allocatable."""
    labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.memory": "40960",
              "nvidia.com/gpu.count": "1", "nvidia.com/gpu.family": "ampere", "nvidia.com/mig.capable": "true",
              "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": mig_config,
              "nvidia.com/mig.config.state": "success", "nvidia.com/gpu.deploy.mig-manager": "true"}
    n = node(name, labels, {}, seed)
    del n["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"]
    return n


def dra_attrs(node_name, kind, profile=None, uuid=True):
    a = {"type": {"string": kind}, "productName": {"string": DRA_PRODUCT}, "brand": {"string": "Nvidia"},
         "architecture": {"string": "Ampere"}, "cudaComputeCapability": {"version": "8.0.0"},
         "driverVersion": {"version": "580.95.5"}, "cudaDriverVersion": {"version": "13.0.0"},
         "resource.kubernetes.io/pciBusID": {"string": "0000:07:00.0"},
         "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"}}
    parent = f"GPU-{seed_uuid(node_name, 255)}"
    if kind == "gpu" and uuid:
        a["uuid"] = {"string": parent}
    if profile:
        a["profile"] = {"string": profile}
        a["parentUUID"] = {"string": parent}
    return a


def dra_mig_device(node_name, profile, start, counter_set=None):
    gi, memory, slices, sms = DRA_PROFILES[profile]
    d = {"name": f"gpu-0-mig-{profile.replace('.', '')}-{gi}-{start}",
         "attributes": dra_attrs(node_name, "mig", profile),
         "capacity": {"memory": {"value": memory}, "multiprocessors": {"value": str(sms)}}}
    if counter_set:
        d["consumesCounters"] = [{"counterSet": counter_set, "counters": {
            f"memory-slice-{i}": {"value": "1"} for i in range(start, start + slices)}}]
    else:
        d["attributes"]["uuid"] = {"string": f"MIG-{seed_uuid(node_name, start)}"}
        d["capacity"].update({f"memorySlice{i}": {"value": "1"} for i in range(start, start + slices)})
    return d


def seed_uuid(node_name, start):
    return f"{sum(map(ord, node_name)):08x}-{start:04x}-5000-8000-000000000000"


def resource_slice(node_name, devices, seed, counters=None, generation=1):
    spec = {"driver": DRA_DRIVER, "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1}, "devices": devices}
    if counters:
        spec["sharedCounters"] = counters
    m = meta(f"{node_name}-{DRA_DRIVER}-{seed:05d}", uid_seed=seed)
    m["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node_name, "controller": True,
                             "uid": f"00000000-0000-4000-8000-{seed - 500:012d}"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": m, "spec": spec}


def device_class(name, kind, seed):
    expr = f"device.driver == '{DRA_DRIVER}' && device.attributes['{DRA_DRIVER}'].type == '{kind}'"
    spec = {"selectors": [{"cel": {"expression": expr}}]}
    if kind == "gpu":
        spec["extendedResourceName"] = "nvidia.com/gpu"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta(name, uid_seed=seed),
            "spec": spec}


def claim_template(namespace, name, device_class_name, selector, seed):
    request = {"name": "gpu", "exactly": {"deviceClassName": device_class_name, "allocationMode": "ExactCount",
                                          "count": 1}}
    if selector:
        request["exactly"]["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": meta(name, namespace, uid_seed=seed), "spec": {"spec": {"devices": {"requests": [request]}}}}


def claim_pod(namespace, app, index, template, node_name, seed, pending_message=None):
    """A pod whose container uses claim `gpu` from ResourceClaimTemplate `template` (no nvidia.com/ request),
    and, when it runs on `node_name`, its generated claim name in status.resourceClaimStatuses."""
    p = pod(namespace, app, index, "cpu", node_name, seed, pending_message)
    c = p["spec"]["containers"][0]
    c["resources"] = {"requests": {"cpu": "2"}, "claims": [{"name": "gpu"}]}
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    if not pending_message:
        p["status"]["resourceClaimStatuses"] = [{"name": "gpu",
                                                 "resourceClaimName": f"{p['metadata']['name']}-gpu-x7k2p"}]
    return p


def resource_claim(claim_owner, node_name, device, seed):
    """The claim the resourceclaim controller made for pod `claim_owner`, allocated `device` of `node_name`'s
    pool by the scheduler and reserved for the pod."""
    name = claim_owner["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    owner = claim_owner["metadata"]
    m = meta(name, owner["namespace"], annotations={"resource.kubernetes.io/pod-claim-name": "gpu"}, uid_seed=seed)
    m["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner["name"], "uid": owner["uid"],
                             "controller": True, "blockOwnerDeletion": True}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": m,
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "mig.nvidia.com"
                                                                          if "mig" in device else "gpu.nvidia.com",
                                                                          "count": 1}}]}},
            "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": DRA_DRIVER,
                                                               "pool": node_name, "device": device}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
                       "reservedFor": [{"resource": "pods", "name": owner["name"], "uid": owner["uid"]}]}}


def mixed_dra():
    """Device-plugin and DRA nodes in one cluster: a100-dp (device plugin, 7 x 1g.5gb, all held by triton's
    pods, its HPA at maxReplicas 7); a100-dra-static (DRA static MIG, seven 1g.5gb devices, all claimed by
    triton-claims' pods, one more pending: cannot allocate all claims); a100-dra-idle (DRA static MIG,
    two 3g.20gb devices, free); a100-dra-part (DRA partitionable: the driver's DynamicMIG, MIG mode off,
    whose first 3g.20gb placement a training job's claim holds)."""
    res = "nvidia.com/mig-1g.5gb"
    one_slice = "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"
    items = [mig_node("a100-dp", "NVIDIA-A100-SXM4-40GB", 40960, 1, "all-1g.5gb", {"1g.5gb": 7}, 1),
             dra_node("a100-dra-static", "all-1g.5gb", 2), dra_node("a100-dra-idle", "all-3g.20gb", 3),
             dra_node("a100-dra-part", "all-disabled", 4)]
    items += [pod("default", "triton", i, res, "a100-dp", 100 + i) for i in range(7)]
    items += [deployment("default", "triton", 7, res, 50),
              hpa("default", "triton", 1, 7, 7, 7, "399300m", "50", True, 60)]
    static = [dra_mig_device("a100-dra-static", "1g.5gb", s) for s in range(7)]
    pods = [claim_pod("default", "triton-claims", i, "one-slice", "a100-dra-static", 400 + i) for i in range(7)]
    claims = [resource_claim(p, "a100-dra-static", d["name"], 420 + i) for i, (p, d) in enumerate(zip(pods, static))]
    pending = ("0/4 nodes are available: 4 cannot allocate all claims. "
               "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    pods.append(claim_pod("default", "triton-claims", 7, "one-slice", "", 407, pending))
    deploy = deployment("default", "triton-claims", 8, res, 51)
    deploy["spec"]["template"]["spec"] = {"containers": [pods[-1]["spec"]["containers"][0]],
                                          "resourceClaims": pods[-1]["spec"]["resourceClaims"]}
    items += pods + claims + [deploy, hpa("default", "triton-claims", 1, 8, 8, 8, "399300m", "50", True, 61)]
    items += [resource_slice("a100-dra-static", static, 502),
              resource_slice("a100-dra-idle", [dra_mig_device("a100-dra-idle", "3g.20gb", s) for s in (0, 4)], 503)]
    counter_set = "gpu-0-counter-set"
    whole = {"name": "gpu-0", "attributes": dra_attrs("a100-dra-part", "gpu"),
             "capacity": {"memory": {"value": "40Gi"}},
             "consumesCounters": [{"counterSet": counter_set,
                                   "counters": {f"memory-slice-{i}": {"value": "1"} for i in range(8)}}]}
    part = [whole] + [dra_mig_device("a100-dra-part", "1g.5gb", s, counter_set) for s in range(7)]
    part += [dra_mig_device("a100-dra-part", "3g.20gb", s, counter_set) for s in (0, 4)]
    counters = [{"name": counter_set, "counters": {f"memory-slice-{i}": {"value": "1"} for i in range(8)}}]
    items.append(resource_slice("a100-dra-part", part, 504, counters))
    trainer = claim_pod("training", "trainer", 0, "three-slices", "a100-dra-part", 450)
    items += [trainer, resource_claim(trainer, "a100-dra-part", "gpu-0-mig-3g20gb-9-0", 451)]
    items += [device_class("gpu.nvidia.com", "gpu", 910), device_class("mig.nvidia.com", "mig", 911),
              claim_template("default", "one-slice", "mig.nvidia.com", one_slice, 912),
              claim_template("training", "three-slices", "mig.nvidia.com",
                             "device.attributes['gpu.nvidia.com'].profile == '3g.20gb'", 913)]
    return kubectl_list(items + OPERATOR_CMS)


def main():
    idle = mig_node("a100-node-3", "NVIDIA-A100-SXM4-40GB", 40960, 2, "all-3g.20gb", {"3g.20gb": 4}, 5)
    scenarios = {"a100_1g_stuck.json": a100_stuck(), "t4_timeslicing.json": t4_timeslicing(),
                 "a100_balanced_timeslicing.json": a100_balanced(),
                 "a100_idle_reshape.json": a100_stuck([idle]), "mixed_dra.json": mixed_dra()}
    for name, dump in scenarios.items():
        (HERE / name).write_text(json.dumps(dump, indent=2) + "\n")


if __name__ == "__main__":
    main()
