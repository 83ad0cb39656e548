#!/usr/bin/env python3
"""Triton-like counters for the pods of a KWOK-run Deployment (KWOK pods have no IPs to scrape).

Serves nv_inference_request_success and nv_inference_queue_duration_us with namespace/pod labels
for every Running pod that matches the selector, read from the API with kubectl. Every pod takes
--rate requests/s; each waits the queue time (microseconds) written in --queue-file, so a test can
turn the load "high" or "low" by rewriting one file. Counters only grow, as Triton's do. It also
serves kube-state-metrics' kube_pod_labels for those pods (standalone adapters select with it).
This is a test fixture with a fixed queue time, not a load model (that is gpuscale-sim's).

Usage: pod_exporter.py --kubectl KUBECTL --namespace NS --selector SEL --queue-file F
                       --port-file F [--rate 10]
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from kwok_exporter import exporter_arguments, running_pods, serve_metrics  # noqa: E402


class Pods:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.names = []
        self.counters = {}  # pod -> [success, queue_us]
        self.last = time.monotonic()

    def refresh(self):
        pods = running_pods(self.args.kubectl, self.args.namespace, self.args.selector)
        if pods is None:
            return
        with self.lock:
            self.names = [p["metadata"]["name"] for p in pods]

    def queue_us(self):
        try:
            with open(self.args.queue_file) as f:
                return float(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0.0

    def advance(self):
        now = time.monotonic()
        queue = self.queue_us()
        with self.lock:
            dt = now - self.last
            self.last = now
            for name in self.names:
                c = self.counters.setdefault(name, [0.0, 0.0])
                c[0] += self.args.rate * dt
                c[1] += self.args.rate * dt * queue
            return [(n, self.counters[n]) for n in self.names]

    def render(self):
        rows = self.advance()
        ns = self.args.namespace
        out = ["# HELP nv_inference_request_success Number of successful inference requests.",
               "# TYPE nv_inference_request_success counter"]
        out += ['nv_inference_request_success{model="simple",version="1",namespace="%s",pod="%s"} %d'
                % (ns, n, c[0]) for n, c in rows]
        out += ["# HELP nv_inference_queue_duration_us Cumulative queue duration in microseconds.",
                "# TYPE nv_inference_queue_duration_us counter"]
        out += ['nv_inference_queue_duration_us{model="simple",version="1",namespace="%s",pod="%s"} %d'
                % (ns, n, c[1]) for n, c in rows]
        # kube-state-metrics' label series, for an adapter in standalone mode.
        out += ["# TYPE kube_pod_labels gauge"]
        out += ['kube_pod_labels{namespace="%s",pod="%s",%s} 1' % (ns, n, self.args.labels)
                for n, _ in rows]
        return "\n".join(out) + "\n"


def main():
    parser = exporter_arguments("--queue-file")
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--labels", default='label_app="triton"',
                        help="the pods' labels as kube-state-metrics writes them")
    args = parser.parse_args()
    pods = Pods(args)
    serve_metrics(pods.refresh, pods.render, args.port_file)


if __name__ == "__main__":
    main()
