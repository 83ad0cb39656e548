"""Checks that the values of fallback-values.yaml become the adapter's --external-metrics-fallback-*
flags, each file flag naming the right key of the right Secret through a mounted volume.
Usage: check_fallback.py RENDER.yaml"""
import sys

import yaml

# flag: its value, or (Secret, key) for the file flags.
want = {
    "url": "https://keda-operator-metrics-apiserver.keda.svc:443",
    "ca-file": ("keda-ca", "bundle.pem"),
    "insecure-skip-tls-verify": "true",
    "client-cert-file": ("fallback-client", "tls.crt"),
    "client-key-file": ("fallback-client", "tls.key"),
    "token-file": ("keda-token", "sa-token"),
    "timeout": "3s",
    "discovery-ttl": "1m",
}
prefix = "--external-metrics-fallback-"
deployment = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d
                  and d["kind"] == "Deployment" and d["metadata"]["name"] == "gpuscale-adapter")
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}


def secret_file(path):
    """(Secret, key) of a file path in a mounted Secret volume, or None."""
    for mount, volume in mounts.items():
        if path.startswith(mount + "/") and volume in secrets:
            return secrets[volume], path[len(mount) + 1:]
    return None


got = {}
for arg in container["args"]:
    if arg.startswith(prefix):
        name, _, value = arg[len(prefix):].partition("=")
        got[name] = secret_file(value) if name.endswith("-file") else value
failures = ["--%s%s: want %r, got %r" % (prefix[2:], name, want.get(name), got.get(name))
            for name in sorted(set(want) | set(got)) if want.get(name) != got.get(name)]
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
