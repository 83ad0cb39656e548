#!/usr/bin/env python3
"""An external planner for the scenario harness (`workload.scaler: planner`): it plays what NVIDIA
Dynamo's planner or llm-d's variant autoscaler do, a process that computes the replicas it wants
and scales the workload itself, with no HPA. A test part, not product code.

Every --interval seconds (wall) it
  1. reads the load signal the HPA scenarios scale on, from Prometheus: the pods' mean queue time
     (Triton) or requests waiting (vLLM), the PromQL of KEDA's trigger (workload.py);
  2. computes the replicas it wants with the HPA controller's rule and the harness HPA's behavior,
     so that the only difference from the HPA rows is who holds the ceiling:
     ceil(ready pods x signal / target) unless within 10 % of the target; scale-out at most
     max(2x, +4) per 15 s; scale-in to the highest recommendation of the last 30 s, at most one
     pod per 15 s; between 1 and --max-replicas;
  3. finds how far it may scale (its limit):
       --mode request  (gpuscale installed) it writes what it wants to `spec.replicas` of the
                       GPUCapacityRequest NAME (workloadRef: the Deployment; created at the start
                       with the --annotation given) and reads `status.grantedReplicas`;
       --mode budget   (no gpuscale) the partitions it can see: the nodes' allocatable of
                       --resource (those its own pods hold and the free ones), as a planner with a
                       GPU budget (Dynamo's max GPU budget) is configured from the cluster; pods
                       beyond it would only wait Pending;
  4. scales the Deployment through its /scale subresource (`kubectl scale`) to what it wants when
     that is a scale-in, else to min(wanted, limit) but never below the replicas it has: a grant
     that lags (0 before the reconciler's first pass) holds a scale-out back, it never takes
     running pods away. Scale-in goes first and the request is lowered after it, scale-out asks
     first and scales when granted.

Each tick writes STATE (JSON, replaced atomically) for the harness's samples:
{"planner": {"mode", "t", "signal", "ready", "replicas", "wanted", "limit", "granted", "static"}}
and a line to stdout. SIGTERM stops it.

Usage: planner.py --namespace NS --name NAME --prometheus URL --metric avg_time_queue_us
                  --target N --mode request|budget --resource RES --static N --max-replicas N
                  --state FILE [--annotation KEY=VALUE] [--interval SECONDS]
kubectl: $KUBECTL (else kubectl on PATH), kubeconfig from $KUBECONFIG.
"""
import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workload import TRIGGER_QUERY  # noqa: E402  (the same PromQL as the KEDA trigger)

TOLERANCE = 0.1          # the HPA controller's default
SCALE_UP_PERIOD = 15     # the controller's default scale-up policies: 100 % or 4 pods per 15 s
SCALE_DOWN_PERIOD = 15   # the harness HPA's scale-in: one pod per 15 s ...
SCALE_DOWN_WINDOW = 30   # ... after a 30 s stabilization window


class Behavior:
    """The HPA controller's rule and the harness HPA's behavior, over the planner's own history."""

    def __init__(self, min_replicas, max_replicas):
        self.min, self.max = min_replicas, max_replicas
        self.recommendations = []  # (time, raw recommendation)
        self.changes = []          # (time, replicas delta the planner made)

    def raw(self, signal, target, ready, current):
        if signal is None or ready == 0:
            return current
        ratio = signal / target
        if abs(ratio - 1) <= TOLERANCE:
            return current
        return math.ceil(ratio * ready)

    def wanted(self, now, raw, current):
        self.recommendations = [(t, r) for t, r in self.recommendations
                                if now - t < SCALE_DOWN_WINDOW] + [(now, raw)]
        self.changes = [(t, d) for t, d in self.changes
                        if now - t < max(SCALE_UP_PERIOD, SCALE_DOWN_PERIOD)]
        if raw > current:
            start = current - sum(d for t, d in self.changes if d > 0 and now - t < SCALE_UP_PERIOD)
            out = min(raw, max(2 * start, start + 4))
        elif raw < current:
            stabilized = max(r for _, r in self.recommendations)
            start = current - sum(d for t, d in self.changes if d < 0 and now - t < SCALE_DOWN_PERIOD)
            out = max(min(current, stabilized), start - 1)
        else:
            out = current
        return max(self.min, min(self.max, out))

    def scaled(self, now, delta):
        if delta:
            self.changes.append((now, delta))


def target_replicas(wanted, current, limit):
    """What the Deployment is scaled to: a scale-in always, a scale-out only as far as the limit,
    never below what runs."""
    if wanted <= current:
        return wanted
    return max(current, min(wanted, limit))


class Cluster:
    def __init__(self, args):
        self.args = args
        self.kubectl = os.environ.get("KUBECTL", "kubectl")

    def run(self, *argv, stdin=None):
        p = subprocess.run([self.kubectl, "-n", self.args.namespace, *argv], input=stdin,
                           capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(argv[:3]), p.stderr.strip()))
        return p.stdout

    def get(self, *argv):
        return json.loads(self.run("get", *argv, "-o", "json"))

    def signal(self):
        query = TRIGGER_QUERY[self.args.metric].replace("NS", self.args.namespace).replace(
            "PODS", self.args.name + "-.*")
        url = self.args.prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": query})
        try:
            result = json.load(urllib.request.urlopen(url, timeout=10))["data"]["result"]
            value = float(result[0]["value"][1]) if result else None
        except (OSError, ValueError, KeyError, IndexError):
            return None
        return None if value is None or math.isnan(value) else value

    def deployment(self):
        d = self.get("deployment", self.args.name)
        return d["spec"].get("replicas", 1), d.get("status", {}).get("readyReplicas", 0)

    def scale(self, replicas):
        self.run("scale", "deployment/" + self.args.name, "--replicas=%d" % replicas)

    def budget(self):
        nodes = json.loads(subprocess.run([self.kubectl, "get", "nodes", "-o", "json"],
                                          capture_output=True, text=True, timeout=30,
                                          check=True).stdout)
        return sum(int(n["status"].get("allocatable", {}).get(self.args.resource, "0"))
                   for n in nodes["items"])

    def create_request(self, replicas):
        annotations = dict(a.split("=", 1) for a in self.args.annotation)
        request = {"apiVersion": "gpuscale.io/v1alpha1", "kind": "GPUCapacityRequest",
                   "metadata": {"name": self.args.name, "annotations": annotations},
                   "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": self.args.name},
                            "replicas": replicas}}
        self.run("apply", "-f", "-", stdin=json.dumps(request))

    def ask(self, replicas):
        self.run("patch", "gpucapacityrequest", self.args.name, "--type=merge",
                 "-p", json.dumps({"spec": {"replicas": replicas}}))

    def request(self):
        """status.grantedReplicas (0 before the reconciler's first write)."""
        return self.get("gpucapacityrequest", self.args.name).get("status", {}).get(
            "grantedReplicas", 0)


def write_state(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"planner": state}, f)
    os.replace(tmp, path)


def tick(cluster, behavior, args, asked):
    """One round; returns what the request asks for now (request mode)."""
    now = time.monotonic()
    current, ready = cluster.deployment()
    signal_value = cluster.signal()
    wanted = behavior.wanted(now, behavior.raw(signal_value, args.target, ready, current), current)
    granted = None
    if args.mode == "request":
        if wanted > asked:
            cluster.ask(wanted)
            asked = wanted
        granted = cluster.request()
        limit = granted
    else:
        limit = cluster.budget()
    replicas = target_replicas(wanted, current, limit)
    if replicas != current:
        cluster.scale(replicas)
        behavior.scaled(now, replicas - current)
    if args.mode == "request" and wanted < asked:
        cluster.ask(wanted)  # after the scale-in: the partitions go back once the pods are gone
        asked = wanted
    state = {"mode": args.mode, "t": round(time.time(), 3), "signal": signal_value, "ready": ready,
             "replicas": replicas, "wanted": wanted, "limit": limit, "granted": granted,
             "static": args.static}
    write_state(args.state, state)
    print(json.dumps(state), flush=True)
    return asked


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--prometheus", required=True)
    parser.add_argument("--metric", required=True, choices=sorted(TRIGGER_QUERY))
    parser.add_argument("--target", type=float, required=True)
    parser.add_argument("--mode", required=True, choices=("request", "budget"))
    parser.add_argument("--resource", required=True)
    parser.add_argument("--static", type=int, required=True,
                        help="the partitions at the start (for the samples)")
    parser.add_argument("--max-replicas", type=int, required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--annotation", action="append", default=[])
    parser.add_argument("--interval", type=float, default=5)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    cluster = Cluster(args)
    behavior = Behavior(1, args.max_replicas)
    asked = 0
    if args.mode == "request":
        asked = cluster.deployment()[0]
        for attempt in range(30):  # the CRD may be Established before every client discovers it
            try:
                cluster.create_request(asked)
                break
            except (RuntimeError, subprocess.SubprocessError) as e:
                if attempt == 29:
                    raise
                print("creating the request: %s" % e, file=sys.stderr, flush=True)
                time.sleep(1)
    while True:
        started = time.monotonic()
        try:
            asked = tick(cluster, behavior, args, asked)
        except (RuntimeError, subprocess.SubprocessError, ValueError, KeyError) as e:
            print("tick failed: %s" % e, file=sys.stderr, flush=True)
        time.sleep(max(0.0, args.interval - (time.monotonic() - started)))


if __name__ == "__main__":
    main()
