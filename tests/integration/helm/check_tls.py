"""Checks the adapter's TLS objects in a chart render for one tls.mode (and, with --pod-monitor,
the reconciler's status certificate and the PodMonitor that verifies it).

usage: check_tls.py selfSigned|certManager|secret|insecure RENDER [--pod-monitor]"""
import base64
import datetime
import os
import subprocess
import sys
import tempfile

import yaml

mode, path = sys.argv[1], sys.argv[2]
pod_monitor = "--pod-monitor" in sys.argv[3:]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
api_services = [d for d in docs if d["kind"] == "APIService"]
deployment = next(d for d in docs if d["kind"] == "Deployment"
                  and d["metadata"]["name"] == "gpuscale-adapter")
container = deployment["spec"]["template"]["spec"]["containers"][0]
volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def secret(name):
    return next((d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"] == name), None)


def openssl(args, pems):
    """Runs `openssl ARGS` with each PEM (base64 in a Secret) written to a file named by its key."""
    with tempfile.TemporaryDirectory() as tmp:
        for key, value in pems.items():
            with open(os.path.join(tmp, key), "wb") as f:
                f.write(base64.b64decode(value))
        out = subprocess.run(["openssl"] + args, cwd=tmp, capture_output=True, text=True)
        return out.returncode, out.stdout


def days_left(cert_b64):
    _, out = openssl(["x509", "-noout", "-enddate", "-in", "c"], {"c": cert_b64})
    end = datetime.datetime.strptime(out.strip().split("=", 1)[1], "%b %d %H:%M:%S %Y %Z")
    return (end - datetime.datetime.utcnow()).days


def check_self_signed_pair(name, dns):
    """A Secret `name` with a leaf for `dns` signed by the chart's CA, valid about a year."""
    pair, ca = secret(name), secret("gpuscale-adapter-serving-ca")
    check(pair is not None and ca is not None, f"Secrets {name} and gpuscale-adapter-serving-ca")
    if pair is None or ca is None:
        return
    check(pair["data"]["ca.crt"] == ca["data"]["tls.crt"], f"{name}: ca.crt is the chart's CA")
    check(ca["data"].get("tls.key"), "the CA keeps its key (renewals sign with the same CA)")
    code, _ = openssl(["verify", "-CAfile", "ca", "leaf"],
                      {"ca": ca["data"]["tls.crt"], "leaf": pair["data"]["tls.crt"]})
    check(code == 0, f"{name} is signed by the CA")
    _, text = openssl(["x509", "-noout", "-text", "-in", "leaf"], {"leaf": pair["data"]["tls.crt"]})
    check(f"DNS:{dns}" in text, f"{name} names {dns}")
    check(364 <= days_left(pair["data"]["tls.crt"]) <= 365, f"{name} lasts one year")
    check(3640 <= days_left(ca["data"]["tls.crt"]) <= 3650, "the CA lasts ten years")
    for d in (pair, ca):
        check("gpuscale.io/not-after" in d["metadata"].get("annotations", {}),
              f"{d['metadata']['name']} records its end for the next upgrade")


check(len(api_services) == 3, "three APIServices")
check(all(not a["spec"].get("insecureSkipTLSVerify") for a in api_services) == (mode != "insecure"),
      "no APIService skips verification (but with tls.mode=insecure)")
check(("--tls-cert-file=/var/run/serving-cert/tls.crt" in container["args"]) == (mode != "insecure"),
      "--tls-cert-file")
check(("--tls-private-key-file=/var/run/serving-cert/tls.key" in container["args"]) ==
      (mode != "insecure"), "--tls-private-key-file")
secret_name = volumes["serving-cert"].get("secret", {}).get("secretName")
if mode == "selfSigned":
    check(secret_name == "gpuscale-adapter-serving-cert", "the Deployment mounts the generated Secret")
    check_self_signed_pair(secret_name, "gpuscale-adapter.gpuscale.svc")
    ca = secret("gpuscale-adapter-serving-ca")["data"]["tls.crt"]
    check(all(a["spec"].get("caBundle") == ca for a in api_services), "caBundle is that CA")
elif mode == "certManager":
    kinds = {d["kind"] for d in docs}
    check({"Certificate", "Issuer"} <= kinds, "a Certificate and an Issuer")
    certificate = next(d for d in docs if d["kind"] == "Certificate"
                       and d["metadata"]["name"] == "gpuscale-adapter-serving-cert")
    check(certificate["spec"]["secretName"] == secret_name, "the Deployment mounts its Secret")
    issuer = next((d for d in docs if d["kind"] == "Issuer"
                   and d["metadata"]["name"] == certificate["spec"]["issuerRef"]["name"]), {})
    check(issuer.get("spec", {}).get("ca", {}).get("secretName") == "gpuscale-adapter-ca",
          "signed by the CA Issuer (renewals keep the CA)")
    check(all(a["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from") ==
              "gpuscale/gpuscale-adapter-serving-cert" for a in api_services), "CA injection")
elif mode == "secret":
    check(secret_name == "mine", "the Deployment mounts the user's Secret")
    check(all(a["spec"].get("caBundle") == "Q0E=" for a in api_services), "the user's caBundle")
    check(not any(d["kind"] == "Secret" for d in docs), "no generated Secret")

# The reconciler's status listener and its PodMonitor.
monitor = next((d for d in docs if d["kind"] == "PodMonitor"), None)
reconciler = next(d for d in docs if d["kind"] == "Deployment"
                  and d["metadata"]["name"] == "gpuscale-reconciler")
rargs = reconciler["spec"]["template"]["spec"]["containers"][0]["args"]
rvolumes = {v["name"]: v for v in reconciler["spec"]["template"]["spec"].get("volumes", [])}
status_files = "--status-tls-cert-file=/var/run/status-cert/tls.crt" in rargs
check(pod_monitor == (monitor is not None), "a PodMonitor exactly when enabled")
if monitor is not None:
    tls = monitor["spec"]["podMetricsEndpoints"][0]["tlsConfig"]
    if mode == "insecure":
        check(tls == {"insecureSkipVerify": True}, "tls.mode=insecure: the PodMonitor skips verification")
        check(not status_files, "tls.mode=insecure: the listener makes its own certificate")
    else:
        expected = rvolumes.get("status-cert", {}).get("secret", {}).get("secretName")
        check(status_files and expected, "the listener serves the mounted status certificate")
        check(tls.get("ca") == {"secret": {"name": expected, "key": "ca.crt"}},
              "the PodMonitor verifies against that Secret's ca.crt")
        check(tls.get("serverName") == "gpuscale-reconciler.gpuscale.svc", "and the server name")
        check("insecureSkipVerify" not in tls, "the PodMonitor does not skip verification")
        if mode == "selfSigned":
            check_self_signed_pair(expected, "gpuscale-reconciler.gpuscale.svc")
        if mode == "certManager":
            certificate = next((d for d in docs if d["kind"] == "Certificate"
                                and d["spec"]["secretName"] == expected), None)
            check(certificate is not None, "a Certificate for the status listener")
else:
    check(not status_files, "no status certificate without the PodMonitor")
for failure in failures:
    print("FAIL " + failure)
sys.exit(1 if failures else 0)
