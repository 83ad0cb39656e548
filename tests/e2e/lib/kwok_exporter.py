"""What the e2e tests' exporters for KWOK-run pods share (KWOK pods have no IPs and no kubelet to
scrape, so a test process serves their series): the Running pods of a selector, read with kubectl,
and a /metrics HTTP server on a free loopback port whose number is written to a file.

    from kwok_exporter import exporter_arguments, running_pods, serve_metrics
"""
import argparse
import http.server
import json
import os
import subprocess
import threading
import time


def exporter_arguments(*flags):
    """The command line every exporter takes: the pods to serve (--kubectl, --namespace,
    --selector), the exporter's own required `flags`, and --port-file; add the optional ones."""
    parser = argparse.ArgumentParser()
    for flag in ("--kubectl", "--namespace", "--selector", *flags, "--port-file"):
        parser.add_argument(flag, required=True)
    return parser


def running_pods(kubectl, namespace, selector):
    """The Running, not terminating pods (API objects) of `selector` in `namespace`, sorted by name;
    None when kubectl failed."""
    out = subprocess.run(
        [kubectl, "get", "pods", "-n", namespace, "-l", selector,
         "--field-selector=status.phase=Running", "-o", "json"],
        capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        return None
    pods = [p for p in json.loads(out.stdout)["items"] if "deletionTimestamp" not in p["metadata"]]
    return sorted(pods, key=lambda p: p["metadata"]["name"])


def serve_metrics(refresh, render, port_file):
    """Calls `refresh()` every second in the background (exceptions keep the previous state) and
    serves `render()` (text exposition) at /metrics; writes the port to `port_file` atomically."""
    def poll():
        while True:
            try:
                refresh()
            except Exception:  # a slow or failed kubectl: keep the last list
                pass
            time.sleep(1)

    threading.Thread(target=poll, daemon=True).start()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
