#!/usr/bin/env python3
"""cAdvisor- and kubelet-style usage series for the pods of a KWOK-run cluster (KWOK pods have no
kubelet to scrape).

Serves, for every Running pod that matches the selector (read from the API with kubectl), one
container_cpu_usage_seconds_total counter and one container_memory_working_set_bytes gauge per
container of the pod's spec, with namespace/pod/container labels: each container uses --cores
cores and --memory bytes. For --node it serves node_cpu_usage_seconds_total and
node_memory_working_set_bytes (--node-cores, --node-memory). Counters only grow.

Usage: usage_exporter.py --kubectl KUBECTL --namespace NS --selector SEL --node NODE
                         --port-file F [--cores 0.25] [--memory 67108864]
                         [--node-cores 1.5] [--node-memory 2147483648]
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from kwok_exporter import exporter_arguments, running_pods, serve_metrics  # noqa: E402


class Usage:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.containers = []  # (pod, container)
        self.start = time.monotonic()

    def refresh(self):
        pods = running_pods(self.args.kubectl, self.args.namespace, self.args.selector)
        if pods is None:
            return
        containers = [(p["metadata"]["name"], c["name"]) for p in pods
                      for c in p["spec"]["containers"]]
        with self.lock:
            self.containers = containers

    def render(self):
        a = self.args
        seconds = time.monotonic() - self.start
        with self.lock:
            containers = list(self.containers)
        out = ["# TYPE container_cpu_usage_seconds_total counter"]
        out += ['container_cpu_usage_seconds_total{namespace="%s",pod="%s",container="%s"} %.6f'
                % (a.namespace, p, c, a.cores * seconds) for p, c in containers]
        out += ["# TYPE container_memory_working_set_bytes gauge"]
        out += ['container_memory_working_set_bytes{namespace="%s",pod="%s",container="%s"} %d'
                % (a.namespace, p, c, a.memory) for p, c in containers]
        out += ["# TYPE node_cpu_usage_seconds_total counter",
                'node_cpu_usage_seconds_total{node="%s"} %.6f' % (a.node, a.node_cores * seconds),
                "# TYPE node_memory_working_set_bytes gauge",
                'node_memory_working_set_bytes{node="%s"} %d' % (a.node, a.node_memory)]
        return "\n".join(out) + "\n"


def main():
    parser = exporter_arguments("--node")
    parser.add_argument("--cores", type=float, default=0.25)
    parser.add_argument("--memory", type=int, default=64 << 20)
    parser.add_argument("--node-cores", type=float, default=1.5)
    parser.add_argument("--node-memory", type=int, default=2 << 30)
    args = parser.parse_args()
    usage = Usage(args)
    serve_metrics(usage.refresh, usage.render, args.port_file)


if __name__ == "__main__":
    main()
