#!/usr/bin/env python3
"""One sample of a scenario run (bench/scenario/run.sh): the Prometheus, model and API state the
chart and the summary need, as one JSON line on stdout (fields in report.py).

Usage: sample.py PROMETHEUS_URL WORK_DIR SIM_HOST:PORT
WORK_DIR holds services.json (written by run.sh), nodes.json and per service SERVICE-dep.json,
SERVICE-hpa.json, SERVICE-pods.json, SERVICE-adapter.json (kubectl output). A single `load:`
scenario (one service, priority null) gives the sample of its one service; a `services:` scenario
gives the sums over the services at the top level and each service's own sample under "services".
The series come from the services' inference server (services.json "server"): Triton's counters, or
vLLM's histograms and counters (the same means, in µs). Pods in groups (a LeaderWorkerSet's) add
groups_running and groups_partial (groups()). A service scaled by the harness's planner
(`workload.scaler: planner`, no HPA; its SERVICE-hpa.json is {}) is read from the planner's own state,
SERVICE-planner.json (planner()).
"""
import json
import os
import re
import sys
import urllib.parse
import urllib.request


def quantity(text):  # a Kubernetes quantity as the adapter and the HPA print it ("399300m", "12")
    m = re.fullmatch(r"([0-9.]+)([mkMG]?)", text or "")
    return float(m.group(1)) * {"m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)] if m else None


# Per inference server: the request counter, and the (sum, count, to µs) pairs of the mean queue time
# and the mean request duration; the HPA's metric is recorded as "hpa_<key>" and "adapter_<key>".
SERIES = {
    "triton": {"success": "nv_inference_request_success",
               "queue": ("nv_inference_queue_duration_us", "nv_inference_request_success", 1),
               "latency": ("nv_inference_request_duration_us", "nv_inference_request_success", 1),
               "hpa_key": "queue_us"},
    "vllm": {"success": "vllm:request_success_total",
             "queue": ("vllm:request_queue_time_seconds_sum",
                       "vllm:request_queue_time_seconds_count", 1e6),
             "latency": ("vllm:e2e_request_latency_seconds_sum",
                         "vllm:e2e_request_latency_seconds_count", 1e6),
             "hpa_key": "waiting"},
}


GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"


def groups(pods):
    """Of pods in groups (LeaderWorkerSet's group-index label): groups_running, the groups whose
    pods all Run, and groups_partial, those with some pods Running and some not (half-placed).
    Nothing for pods without the label."""
    members = {}
    for p in pods:
        group = p["metadata"].get("labels", {}).get(GROUP_LABEL)
        if group is not None:
            running = p["status"].get("phase") == "Running" and "deletionTimestamp" not in p["metadata"]
            members.setdefault(group, []).append(running)
    if not members:
        return {}
    return {"groups_running": sum(1 for r in members.values() if all(r)),
            "groups_partial": sum(1 for r in members.values() if any(r) and not all(r))}


def planner(work, name):
    """What stands for the HPA's fields when the planner scales the service (lib/planner.py): its
    limit as the ceiling (the request's grantedReplicas, or the partitions it sees when the
    reconciler is off), the replicas it wants, its signal, and `limited` when it wants more than
    the partitions at the start (the HPA's ceiling in the other scenarios). {} without a planner."""
    path = "%s/%s-planner.json" % (work, name)
    if not os.path.exists(path):
        return {}
    state = json.load(open(path))["planner"]
    return {"ceiling": state["limit"], "static_ceiling": state["static"],
            "wanted": state["wanted"], "granted": state["granted"], "signal": state["signal"],
            "limited": state["wanted"] > state["static"]}


def main():
    prom, work, sim = sys.argv[1:4]
    services = json.load(open(work + "/services.json"))
    multi = services[0]["priority"] is not None
    series = SERIES[services[0].get("server", "triton")]

    def q(expr):
        url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            r = json.load(urllib.request.urlopen(url, timeout=10))["data"]["result"]
            return float(r[0]["value"][1]) if r else None
        except Exception:
            return None

    def mean_per_request(what, sel):
        total, count, scale = series[what]
        return q('avg(delta(%s{%s}[30s])/(1+delta(%s{%s}[30s]))) * %g' % (total, sel, count, sel, scale))

    # Model truth straight from gpuscale-sim: the pattern's clock, the offered load, the queues.
    truth = {}
    for line in urllib.request.urlopen("http://%s/metrics" % sim, timeout=10).read().decode().splitlines():
        if line.startswith("gpuscale_sim_load_"):
            key, value = line.rsplit(" ", 1)
            truth[key] = float(value)
    t = round(truth.get("gpuscale_sim_load_pattern_seconds", 0.0), 1)
    queues = {}  # pod -> requests waiting
    for key, value in truth.items():
        m = re.match(r'gpuscale_sim_load_pod_queue_length\{.*pod="([^"]+)"', key)
        if m:
            queues[m.group(1)] = value
    nodes = json.load(open(work + "/nodes.json"))
    reconf = q('sum(gpuscale_sim_mig_reconfigurations_total) or vector(0)')
    plugin = q('sum(gpuscale_sim_transitions_total{kind=~".*device.plugin.*"}) or vector(0)')
    reconfigurations = (reconf or 0) + (plugin or 0)

    def service_sample(sv):
        dep, hpa, pods, adapter = (json.load(open("%s/%s-%s.json" % (work, sv["name"], n)))
                                   for n in ("dep", "hpa", "pods", "adapter"))
        live = sorted((p for p in pods["items"] if p["status"].get("phase") == "Running"
                       and "deletionTimestamp" not in p["metadata"]), key=lambda p: p["metadata"]["name"])
        running = [p["metadata"]["name"] for p in live]
        restarts = sum(c.get("restartCount", 0) for p in pods["items"]
                       for c in p["status"].get("containerStatuses", []))
        # What the HPA and `kubectl get --raw` see through the aggregator and the adapter.
        # (KEDA's HPA reads the same quantity as an External metric's value.)
        current = [m["pods"]["current"].get("averageValue") if m.get("type") == "Pods"
                   else m["external"]["current"].get("value")
                   for m in hpa.get("status", {}).get("currentMetrics") or []
                   if m.get("type") in ("Pods", "External")]
        per_pod = [quantity(i.get("value")) for i in adapter.get("items", [])]
        per_pod = [v for v in per_pod if v is not None]
        pending = sum(1 for p in pods["items"] if p["status"].get("phase") == "Pending")
        cond = {c["type"]: c for c in hpa.get("status", {}).get("conditions", [])}
        lim = cond.get("ScalingLimited", {})
        sel = 'namespace="%s"' % sv["namespace"]
        offered = "gpuscale_sim_load_offered_rps"
        if multi:
            # The service's pods by the Deployment's pod names (NAME-HASH-SUFFIX), also those that
            # left within the query window.
            sel += ',pod=~"%s-[a-z0-9]+-[a-z0-9]+"' % sv["name"]
            offered += '{service="%s"}' % sv["name"]
        names = {p["metadata"]["name"] for p in pods["items"]}
        plan = planner(work, sv["name"])
        sample = {"t": t, "load_rps": truth.get(offered),
                  "served_rps": q('sum(rate(%s{%s}[10s]))' % (series["success"], sel)),
                  "queued": sum(v for pod, v in queues.items() if not multi or pod in names),
                  "replicas": dep["spec"]["replicas"], "running": len(running), "pending": pending,
                  "ceiling": hpa.get("spec", {}).get("maxReplicas"),
                  "queue_us": mean_per_request("queue", sel),
                  # End-to-end request latency the same way: time-slicing can trade queue time for
                  # compute time.
                  "latency_us": mean_per_request("latency", sel),
                  "reconfigurations": reconfigurations, "pods": running,
                  "uids": [p["metadata"]["uid"] for p in live], "restarts": restarts,
                  "hpa_" + series["hpa_key"]: quantity(current[0]) if current else None,
                  "adapter_" + series["hpa_key"]: sum(per_pod) / len(per_pod) if per_pod else None,
                  "limited": lim.get("status") == "True" and lim.get("reason") == "TooManyReplicas",
                  **groups(pods["items"])}
        if plan:  # the planner's signal where the HPA's reading would be
            plan["hpa_" + series["hpa_key"]] = plan.pop("signal")
            sample.update(plan)
        return sample

    per_service = {sv["name"]: service_sample(sv) for sv in services}
    node_configs = {n["metadata"]["name"]: {k: n["metadata"].get("labels", {}).get(k, "") for k in
                    ("nvidia.com/mig.config", "nvidia.com/device-plugin.config")} for n in nodes["items"]}
    if not multi:
        out = per_service[services[0]["name"]]
    else:
        subs = list(per_service.values())
        namespaces = "|".join(sorted({sv["namespace"] for sv in services}))
        sel = 'namespace=~"%s"' % namespaces
        out = {"t": t, "load_rps": sum(s["load_rps"] or 0 for s in subs),
               "served_rps": q('sum(rate(%s{%s}[10s]))' % (series["success"], sel)),
               "queue_us": mean_per_request("queue", sel),
               "latency_us": mean_per_request("latency", sel),
               "reconfigurations": reconfigurations, "hpa_" + series["hpa_key"]: None,
               "adapter_" + series["hpa_key"]: None,
               "limited": any(s["limited"] for s in subs), "services": per_service}
        for key in ("queued", "replicas", "running", "pending", "ceiling", "restarts"):
            out[key] = sum(s[key] for s in subs)
        for key in ("pods", "uids"):
            out[key] = [v for s in subs for v in s[key]]
    out["node_configs"] = node_configs
    print(json.dumps(out))


if __name__ == "__main__":
    main()
