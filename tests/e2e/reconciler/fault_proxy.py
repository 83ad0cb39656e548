#!/usr/bin/env python3
"""A fault-injecting HTTPS proxy in front of kube-apiserver, for the reconciler fault tests.

The real server cannot answer 429 or 410 on cue, nor let a test act between a client's read and its
write; this proxy can. It serves HTTPS on a free loopback port (written to --port-file) with the
apiserver's own certificate (so the cluster CA verifies it), forwards every request to
--upstream, and streams watch responses through. A request with a bearer token (a ServiceAccount's)
goes upstream with that token alone, so kube-apiserver authenticates and authorizes its sender;
one without goes with the admin client certificate.

Faults come from a JSON rules file the test rewrites while the proxy runs (re-read when it changes):
  {"throttle": {"methods": ["PATCH", "POST", "PUT"], "every": 2, "retryAfter": 1},
   "expireWatches": 3,
   "drop": ["^(GET|PUT) /apis/coordination.k8s.io/"],
   "hooks": [{"match": "^PATCH /apis/autoscaling/v2/.*/triton$", "body": "maxReplicas",
              "run": "kubectl ...", "once": true}]}
  throttle       every Nth request with one of these methods (and whose "METHOD PATH" matches the
                 regex `match`, if given) answers 429 TooManyRequests with Retry-After, without
                 reaching the server
  expireWatches  the next N watch requests that carry a resourceVersion get the apiserver's
                 "resourceVersion too old" answer: a 200 watch stream with one ERROR event (410)
  drop           a request whose "METHOD PATH" matches one of these regexes is not forwarded and
                 not answered: the connection is closed (a network that loses it)
  hooks          before forwarding the first request whose "METHOD PATH" matches `match` (a regex;
                 and whose body contains `body`, if given), runs `run` with the shell and waits
Each request is logged as one line: method, path, status, and what was injected ("429 injected",
"dropped", ...); a line that ends with the status alone is a request kube-apiserver answered. A
changed rules file is logged ("rules reloaded") before the first request it applies to.
"""
import argparse
import http.client
import http.server
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import urllib.parse

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
               "proxy-connection", "host", "content-length"}


class Rules:
    def __init__(self, path):
        self.path = path
        self.mtime = None
        self.rules = {}
        self.lock = threading.Lock()
        self.counts = {}
        self.fired = set()

    def current(self):
        with self.lock:
            try:
                mtime = os.stat(self.path).st_mtime_ns
            except OSError:
                return self.rules
            if mtime != self.mtime:
                try:
                    with open(self.path) as f:
                        self.rules = json.load(f)
                    self.mtime = mtime
                    self.counts = {}
                    self.fired = set()
                    print("rules reloaded", flush=True)
                except (OSError, ValueError) as e:
                    print(f"rules: {e}", flush=True)
            return self.rules

    def throttled(self, method, line):
        t = self.current().get("throttle")
        if not t or method not in t.get("methods", []):
            return None
        if t.get("match") and not re.search(t["match"], line):
            return None
        with self.lock:
            n = self.counts.get("throttle", 0) + 1
            self.counts["throttle"] = n
        return t.get("retryAfter", 1) if n % max(1, t.get("every", 1)) == 0 else None

    def expire_watch(self):
        limit = self.current().get("expireWatches", 0)
        with self.lock:
            n = self.counts.get("expired", 0)
            if n >= limit:
                return False
            self.counts["expired"] = n + 1
            return True

    def dropped(self, line):
        return any(re.search(d, line) for d in self.current().get("drop", []))

    def hook_for(self, line, body):
        for i, h in enumerate(self.current().get("hooks", [])):
            if not re.search(h["match"], line):
                continue
            if h.get("body") and h["body"] not in body:
                continue
            with self.lock:
                if h.get("once", True) and i in self.fired:
                    continue
                self.fired.add(i)
            return h
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--client-cert", required=True)
    ap.add_argument("--client-key", required=True)
    ap.add_argument("--serve-cert", required=True)
    ap.add_argument("--serve-key", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()

    up = urllib.parse.urlparse(args.upstream)
    up_ctx = ssl.create_default_context(cafile=args.ca)
    up_ctx.load_cert_chain(args.client_cert, args.client_key)
    token_ctx = ssl.create_default_context(cafile=args.ca)  # no client certificate
    rules = Rules(args.rules)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def note(self, status, what=""):
            print(f"{self.command} {self.path} {status}{' ' + what if what else ''}", flush=True)

        def reply(self, status, obj, extra=None):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            watch = query.get("watch", [""])[0] in ("true", "1")
            line = f"{self.command} {self.path}"
            if rules.dropped(line):
                print(f"{line} dropped", flush=True)
                self.close_connection = True
                return
            retry = rules.throttled(self.command, line)
            if retry is not None:
                self.note(429, "injected")
                return self.reply(429, {
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "TooManyRequests", "code": 429,
                    "message": "injected by the fault proxy"}, {"Retry-After": str(retry)})
            if watch and query.get("resourceVersion", ["0"])[0] not in ("", "0") and \
                    rules.expire_watch():
                self.note(200, "watch expired (410) injected")
                event = {"type": "ERROR", "object": {
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "Expired", "code": 410,
                    "message": "too old resource version (injected)"}}
                data = (json.dumps(event) + "\n").encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            hook = rules.hook_for(line, body.decode(errors="replace"))
            if hook:
                rc = subprocess.run(hook["run"], shell=True).returncode
                print(f"hook ran before {self.command} {self.path}: rc={rc}", flush=True)
            self.forward(body, watch)

        def forward(self, body, watch):
            bearer = self.headers.get("Authorization", "").startswith("Bearer ")
            conn = http.client.HTTPSConnection(up.hostname, up.port,
                                               context=token_ctx if bearer else up_ctx,
                                               timeout=None if watch else 60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
            headers["Host"] = up.netloc
            try:
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
            except OSError as e:
                self.note(503, f"upstream: {e}")
                conn.close()
                return self.reply(503, {
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "ServiceUnavailable", "code": 503,
                    "message": f"fault proxy: upstream unreachable: {e}"})
            self.note(resp.status)
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_HEADERS:
                    self.send_header(k, v)
            try:
                if not watch:
                    data = resp.read()
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    chunk = resp.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                self.close_connection = True
            finally:
                conn.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.serve_cert, args.serve_key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    print(f"fault proxy on 127.0.0.1:{server.server_address[1]} -> {args.upstream}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
