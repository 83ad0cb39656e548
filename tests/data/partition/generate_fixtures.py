#!/usr/bin/env python3
"""Writes the seed-scenario dumps in this folder: what `kubectl get nodes,pods,hpa,deployments,configmaps -A
-o json` returns for each scenario. Run it after changing a scenario; the JSON files are committed."""
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


def main():
    idle = mig_node("a100-node-3", "NVIDIA-A100-SXM4-40GB", 40960, 2, "all-3g.20gb", {"3g.20gb": 4}, 5)
    scenarios = {"a100_1g_stuck.json": a100_stuck(), "t4_timeslicing.json": t4_timeslicing(),
                 "a100_balanced_timeslicing.json": a100_balanced(),
                 "a100_idle_reshape.json": a100_stuck([idle])}
    for name, dump in scenarios.items():
        (HERE / name).write_text(json.dumps(dump, indent=2) + "\n")


if __name__ == "__main__":
    main()
