#!/usr/bin/env python3
"""A minimal aggregated-API backend for the control-plane test.

Serves HTTPS on 127.0.0.1 (free port, written to --port-file), requires a client certificate
signed by the front-proxy CA (what kube-apiserver's aggregator presents), answers discovery for
custom.metrics.k8s.io/v1beta1 with an APIResourceList and everything else with a 404 Status.
Each request is logged as one line: method, path, client-cert CN and the X-Remote-* identity.
"""
import argparse
import http.server
import json
import os
import ssl
import sys

GROUP_VERSION = "custom.metrics.k8s.io/v1beta1"
RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": GROUP_VERSION,
    "resources": [{
        "name": "pods/test_metric",
        "singularName": "",
        "namespaced": True,
        "kind": "MetricValueList",
        "verbs": ["get"],
    }],
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        cert = self.connection.getpeercert() or {}
        cn = next((v for rdn in cert.get("subject", ()) for k, v in rdn if k == "commonName"), "")
        print(f"{self.command} {self.path} cn={cn} user={self.headers.get('X-Remote-User', '')} "
              f"groups={','.join(self.headers.get_all('X-Remote-Group') or [])}", flush=True)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/apis/" + GROUP_VERSION:
            self.reply(200, RESOURCES)
        else:
            self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                             "reason": "NotFound", "code": 404, "message": "no such metric"})

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--client-ca", required=True)
    p.add_argument("--port-file", required=True)
    a = p.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.load_verify_locations(a.client_ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
