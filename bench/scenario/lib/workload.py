#!/usr/bin/env python3
"""Rewrites the Deployment and HPA run.sh creates for a service (a YAML stream on stdin, the
objects on stdout) into what the scenario's workload section asks for:

  workload.kind: LeaderWorkerSet, workload.size: N
      the Deployment becomes a LeaderWorkerSet (the custom resource of its shape,
      tests/e2e/scale_target/crd.yaml, whose groups `gpuscale-sim run --pod-groups` keeps) of the
      same replicas, N pods per group from the Deployment's pod template; the HPA's scaleTargetRef
      names it.
  workload.scaler: keda
      the HPA becomes a KEDA ScaledObject of the same name, target, minimum, maximum, behavior and
      annotations (KEDA copies them onto the HPA keda-hpa-NAME it makes), with one Prometheus trigger
      on the same quantity the HPA read through the adapter: the pods' mean queue time (Triton) or
      requests waiting (vLLM), a Value target of the HPA's averageValue, so KEDA's HPA wants
      ceil(replicas x value / target), as the Pods metric did.
  workload.scaler: planner
      no HPA: the external planner (planner.py, started by workload.sh) scales the Deployment
      and, with the reconciler on, asks for partitions through a GPUCapacityRequest.

Usage: workload.py SCENARIO PROMETHEUS_URL NAMESPACE < objects.yaml > objects.yaml
"""
import sys

import yaml

# PromQL over the service's pods (NS, PODS: a regular expression of their names) of what the HPA
# scaled on through the adapter (rules/triton.yaml avg_time_queue_us, rules/vllm.yaml
# vllm_num_requests_waiting): the mean over the pods.
TRIGGER_QUERY = {
    "avg_time_queue_us":
        'avg(delta(nv_inference_queue_duration_us{namespace="NS",pod=~"PODS"}[30s])'
        ' / (1 + delta(nv_inference_request_success{namespace="NS",pod=~"PODS"}[30s])))',
    "vllm_num_requests_waiting": 'avg(vllm:num_requests_waiting{namespace="NS",pod=~"PODS"})',
}


def leader_worker_set(dep, size):
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": dep["metadata"],
            "spec": {"replicas": dep["spec"].get("replicas", 1),
                     "leaderWorkerTemplate": {"size": size,
                                              "workerTemplate": dep["spec"]["template"]}}}


def scaled_object(hpa, prometheus, namespace):
    spec = hpa["spec"]
    metric = spec["metrics"][0]["pods"]
    name = spec["scaleTargetRef"]["name"]
    query = TRIGGER_QUERY[metric["metric"]["name"]].replace("NS", namespace).replace(
        "PODS", name + "-.*")
    advanced = {"horizontalPodAutoscalerConfig": {"behavior": spec["behavior"]}} \
        if spec.get("behavior") else {}
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": hpa["metadata"],
            "spec": {"scaleTargetRef": spec["scaleTargetRef"], "pollingInterval": 5,
                     "minReplicaCount": spec["minReplicas"],
                     "maxReplicaCount": spec["maxReplicas"], "advanced": advanced,
                     "triggers": [{"type": "prometheus", "metricType": "Value",
                                   "metadata": {"serverAddress": prometheus, "query": query,
                                                "threshold": str(metric["target"]["averageValue"])}}]}}


def main():
    scenario, prometheus, namespace = sys.argv[1:4]
    workload = (yaml.safe_load(open(scenario)) or {}).get("workload") or {}
    groups = workload.get("kind", "Deployment") == "LeaderWorkerSet"
    scaler = workload.get("scaler", "hpa")
    out = []
    for doc in yaml.safe_load_all(sys.stdin):
        if not doc:
            continue
        if groups and doc["kind"] == "Deployment":
            doc = leader_worker_set(doc, int(workload.get("size", 1)))
        elif doc["kind"] == "HorizontalPodAutoscaler":
            if scaler == "planner":
                continue
            if groups:
                doc["spec"]["scaleTargetRef"].update(apiVersion="leaderworkerset.x-k8s.io/v1",
                                                     kind="LeaderWorkerSet")
            if scaler == "keda":
                doc = scaled_object(doc, prometheus, namespace)
        out.append(doc)
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
