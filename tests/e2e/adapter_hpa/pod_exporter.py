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
import argparse
import http.server
import json
import os
import subprocess
import threading
import time


class Pods:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.names = []
        self.counters = {}  # pod -> [success, queue_us]
        self.last = time.monotonic()

    def refresh(self):
        out = subprocess.run(
            [self.args.kubectl, "get", "pods", "-n", self.args.namespace, "-l",
             self.args.selector, "--field-selector=status.phase=Running", "-o", "json"],
            capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            return
        names = sorted(p["metadata"]["name"] for p in json.loads(out.stdout)["items"]
                       if "deletionTimestamp" not in p["metadata"])
        with self.lock:
            self.names = names

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
    parser = argparse.ArgumentParser()
    for flag in ("--kubectl", "--namespace", "--selector", "--queue-file", "--port-file"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--labels", default='label_app="triton"',
                        help="the pods' labels as kube-state-metrics writes them")
    args = parser.parse_args()
    pods = Pods(args)

    def poll():
        while True:
            try:
                pods.refresh()
            except Exception:  # a slow or failed kubectl: keep the last list
                pass
            time.sleep(1)

    threading.Thread(target=poll, daemon=True).start()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = pods.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
