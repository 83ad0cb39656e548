#!/usr/bin/env python3
"""The fleet benchmark's objects, written straight to kube-apiserver (bench/scale/fleet.sh).

  populate      KWOK GPU nodes (A100 and H100 with every GPU cut into 1g MIG slices, T4 whole),
                one Deployment and one HPA per node, the GPU Operator's stock mig-parted ConfigMap;
                writes the HPAs' status (there is no HPA controller: see fleet.sh)
  at-ceiling    writes the status of the HPA fleet-react/react as the HPA controller does when the
                HPA wants more than its maxReplicas (ScalingLimited TooManyReplicas); prints the
                time of the write
  first-write   watches node NODE and the ConfigMaps of gpu-operator from now on; prints the time
                of the first change to each, then exits (or after --timeout seconds)

Connection: --server URL --ca FILE --cert FILE --key FILE (the admin's client certificate).
Times are Unix seconds with microseconds.
"""
import argparse
import concurrent.futures
import http.client
import json
import ssl
import sys
import threading
import time
import urllib.parse

PRODUCTS = {
    # kind: (product label, gpu.memory MiB, resource per device, devices per node)
    "a100": ("NVIDIA-A100-SXM4-40GB", 40960, "nvidia.com/mig-1g.5gb", 56),
    "h100": ("NVIDIA-H100-80GB-HBM3", 81559, "nvidia.com/mig-1g.10gb", 56),
    "t4": ("Tesla-T4", 15360, "nvidia.com/gpu", 8),
}
NAMESPACES = 10
POLICY_ANNOTATION = "gpuscale.io/partition-policy"
METRIC = "requests_per_second"
TARGET = 10


class Api:
    def __init__(self, args):
        url = urllib.parse.urlparse(args.server)
        self.host, self.port = url.hostname, url.port
        self.context = ssl.create_default_context(cafile=args.ca)
        self.context.load_cert_chain(args.cert, args.key)
        self.local = threading.local()

    def _conn(self):
        if getattr(self.local, "conn", None) is None:
            self.local.conn = http.client.HTTPSConnection(
                self.host, self.port, context=self.context, timeout=60)
        return self.local.conn

    def call(self, method, path, body=None, content_type="application/json", ok=(200, 201)):
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(20):
            conn = self._conn()
            try:
                conn.request(method, path, body=data, headers={"Content-Type": content_type})
                resp = conn.getresponse()
                text = resp.read()
            except (OSError, http.client.HTTPException):
                self.local.conn = None
                time.sleep(0.2 * (attempt + 1))
                continue
            if resp.status in ok:
                return json.loads(text) if text else None
            if resp.status == 409 and method == "POST":
                return None  # exists already
            if resp.status in (429, 500, 503, 504):
                time.sleep(0.2 * (attempt + 1))
                continue
            raise RuntimeError(f"{method} {path}: {resp.status} {text[:300]!r}")
        raise RuntimeError(f"{method} {path}: gave up")


def kind_of(i):
    """40% A100, 30% H100, 30% T4, interleaved."""
    r = i % 10
    return "a100" if r < 4 else "h100" if r < 7 else "t4"


def node(name, kind):
    product, memory, resource, devices = PRODUCTS[kind]
    labels = {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.deploy.device-plugin": "true", "nvidia.com/gpu.deploy.mig-manager": "true",
    }
    if kind == "t4":
        labels["nvidia.com/mig.capable"] = "false"
    else:
        profile = resource.removeprefix("nvidia.com/mig-")
        labels.update({
            "nvidia.com/mig.capable": "true", "nvidia.com/mig.strategy": "mixed",
            "nvidia.com/mig.config": "all-" + profile, "nvidia.com/mig.config.state": "success",
            f"nvidia.com/mig-{profile}.count": str(devices),
        })
    resources = {"cpu": "256", "memory": "2Ti", "pods": "110", resource: str(devices)}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "status": {"capacity": resources, "allocatable": resources},
    }


def deployment(ns, name, replicas, node_name, resource, per_pod, scheduled):
    """Pods pinned to one node: bound directly (nodeName) or through the scheduler."""
    spec = {
        "tolerations": [{"operator": "Exists"}],
        "containers": [{
            "name": "server", "image": "registry.invalid/inference:1",
            "command": ["tritonserver", "--model-repository=/models"],
            "env": [{"name": "MODEL", "value": name}],
            "resources": {"requests": {"cpu": "10m", resource: str(per_pod)},
                          "limits": {resource: str(per_pod)}},
        }],
    }
    if scheduled:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node_name}
    else:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


def hpa(ns, name, replicas, max_replicas, policy):
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": ns, "annotations": {POLICY_ANNOTATION: policy}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1, "maxReplicas": max_replicas,
            "metrics": [{"type": "Pods", "pods": {
                "metric": {"name": METRIC},
                "target": {"type": "AverageValue", "averageValue": str(TARGET)}}}],
        },
    }


def hpa_status(replicas, load, limited):
    """What the HPA controller writes: `load` per pod against TARGET."""
    return {"status": {
        "currentReplicas": replicas, "desiredReplicas": replicas,
        "currentMetrics": [{"type": "Pods", "pods": {
            "metric": {"name": METRIC}, "current": {"averageValue": str(load)}}}],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
             "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
             "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "ScalingLimited", "status": "True" if limited else "False",
             "reason": "TooManyReplicas" if limited else "DesiredWithinRange",
             "lastTransitionTime": "2026-01-01T00:00:00Z"},
        ],
    }}


def hpa_path(ns, name):
    return f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/{name}"


HELD_REPLICAS = 26  # of 3 slices each: 18 fit an A100's 56, 8 stay Pending
REACT_REPLICAS = 18  # of 3 slices each: the node is full


def layout(nodes, pods, held):
    """One Deployment per node. T4 nodes take 30% of the pods per node the others take. The
    first `held` A100 nodes run a held Deployment: HELD_REPLICAS pods of 3 slices, the surplus
    Pending Unschedulable, its HPA at maxReplicas. The last A100 node runs fleet-react/react,
    REACT_REPLICAS pods of 3 slices, its HPA at maxReplicas and not yet limited. The other MIG
    nodes share what is left of `pods`, 1 slice per pod."""
    kinds = [kind_of(i) for i in range(nodes)]
    react = max(i for i, k in enumerate(kinds) if k == "a100")
    held = min(held, kinds.count("a100") - 1)
    n_t4 = kinds.count("t4")
    n_mig = nodes - n_t4 - 1 - held
    per_t4 = max(1, round(pods / nodes * 0.3))
    left = pods - n_t4 * per_t4 - REACT_REPLICAS - held * HELD_REPLICAS
    out, mig_seen, held_left = [], 0, held
    for i, k in enumerate(kinds):
        name = f"fleet-{i:04d}"
        if i == react:
            out.append(dict(i=i, kind=k, node=name, ns="fleet-react", name="react",
                            replicas=REACT_REPLICAS, per_pod=3, max=REACT_REPLICAS, held=False,
                            scheduled=True, policy="react"))
            continue
        is_held = k == "a100" and held_left > 0
        held_left -= is_held
        if is_held:
            replicas = HELD_REPLICAS
        elif k == "t4":
            replicas = per_t4
        else:
            replicas = left // n_mig + (1 if mig_seen < left % n_mig else 0)
            mig_seen += 1
        out.append(dict(i=i, kind=k, node=name, ns=f"fleet-{i % NAMESPACES}", name=f"w{i:04d}",
                        replicas=replicas, per_pod=3 if is_held else 1,
                        max=replicas if is_held else replicas * 3 // 2 + 1, held=is_held,
                        scheduled=is_held, policy="fleet"))
    return out


def populate(api, args):
    workloads = layout(args.nodes, args.pods, args.held)
    with open(args.mig_config) as f:
        mig_config = f.read()
    for ns in [f"fleet-{i}" for i in range(NAMESPACES)] + ["fleet-react", "gpu-operator"]:
        api.call("POST", "/api/v1/namespaces",
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    api.call("POST", "/api/v1/namespaces/gpu-operator/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "default-mig-parted-config", "namespace": "gpu-operator"},
        "data": {"config.yaml": mig_config}})

    def run(what, fn, items):
        started = time.time()
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            for _ in pool.map(fn, items):
                pass
        print(f"fleet_objects: {len(items)} {what} in {time.time() - started:.1f} s", flush=True)

    run("nodes", lambda w: api.call("POST", "/api/v1/nodes", node(w["node"], w["kind"])),
        workloads)
    run("HPAs", lambda w: api.call(
        "POST", f"/apis/autoscaling/v2/namespaces/{w['ns']}/horizontalpodautoscalers",
        hpa(w["ns"], w["name"], w["replicas"], w["max"], w["policy"])), workloads)
    run("HPA statuses", lambda w: api.call(
        "PATCH", hpa_path(w["ns"], w["name"]) + "/status",
        hpa_status(w["replicas"], 2 * TARGET if w["held"] else TARGET, w["held"]),
        "application/merge-patch+json"), workloads)
    run("Deployments", lambda w: api.call(
        "POST", f"/apis/apps/v1/namespaces/{w['ns']}/deployments",
        deployment(w["ns"], w["name"], w["replicas"], w["node"], PRODUCTS[w["kind"]][2],
                   w["per_pod"], w["scheduled"])), workloads)
    react = next(w for w in workloads if w["name"] == "react")
    print(json.dumps({
        "nodes": len(workloads),
        "nodes_by_kind": {k: sum(w["kind"] == k for w in workloads) for k in PRODUCTS},
        "pods": sum(w["replicas"] for w in workloads),
        "pending": sum(w["replicas"] - 56 // 3 for w in workloads if w["held"]),
        "hpas": len(workloads), "held": sum(w["held"] for w in workloads),
        "react_node": react["node"]}), flush=True)


def at_ceiling(api, args):
    patch = hpa_status(18, 2 * TARGET, True)
    t = time.time()
    api.call("PATCH", hpa_path("fleet-react", "react") + "/status", patch,
             "application/merge-patch+json")
    print(f"{t:.6f}")


def first_write(api, args):
    """Prints `<what> <time>` for the first change to the node's labels, annotations or taints
    and to a gpu-operator ConfigMap; exits once both happened or after --timeout seconds."""
    found, lock, done = {}, threading.Lock(), threading.Event()

    def shape(obj):
        meta = obj.get("metadata", {})
        return (meta.get("labels"), meta.get("annotations"), obj.get("spec", {}).get("taints"))

    def watch(what, path, before):
        conn = http.client.HTTPSConnection(api.host, api.port, context=api.context,
                                           timeout=args.timeout + 5)
        conn.request("GET", path)
        resp = conn.getresponse()
        while not done.is_set():
            line = resp.readline()
            if not line:
                return
            event = json.loads(line)
            obj = event.get("object", {})
            if event.get("type") == "BOOKMARK" or (before is not None and shape(obj) == before):
                continue
            with lock:
                if what not in found:
                    found[what] = time.time()
                    print(f"{what} {found[what]:.6f} {event['type']} "
                          f"{obj.get('metadata', {}).get('name')}", flush=True)
                if len(found) == 2:
                    done.set()

    node = api.call("GET", f"/api/v1/nodes/{args.node}")
    cm_rv = api.call("GET", "/api/v1/namespaces/gpu-operator/configmaps")["metadata"][
        "resourceVersion"]
    watches = [
        ("configmap", f"/api/v1/namespaces/gpu-operator/configmaps?watch=1&resourceVersion={cm_rv}",
         None),
        ("node", f"/api/v1/nodes?watch=1&fieldSelector=metadata.name%3D{args.node}"
         f"&resourceVersion={node['metadata']['resourceVersion']}", shape(node)),
    ]
    for w in watches:
        threading.Thread(target=watch, daemon=True, args=w).start()
    print("watching", flush=True)
    done.wait(args.timeout)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["populate", "at-ceiling", "first-write"])
    for flag in ("--server", "--ca", "--cert", "--key"):
        p.add_argument(flag, required=True)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=20000)
    p.add_argument("--held", type=int, default=100)
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--mig-config")
    p.add_argument("--node")
    p.add_argument("--timeout", type=float, default=60)
    args = p.parse_args()
    api = Api(args)
    {"populate": populate, "at-ceiling": at_ceiling, "first-write": first_write}[args.command](
        api, args)


if __name__ == "__main__":
    sys.exit(main())
