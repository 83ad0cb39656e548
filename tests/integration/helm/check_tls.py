"""Checks the adapter's TLS objects in a chart render for one tls.mode.

usage: check_tls.py selfSigned|certManager|secret RENDER"""
import base64
import sys

import yaml

mode, path = sys.argv[1], sys.argv[2]
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


check(len(api_services) == 3, "three APIServices")
check(all(not a["spec"].get("insecureSkipTLSVerify") for a in api_services),
      "no APIService skips verification")
check("--tls-cert-file=/var/run/serving-cert/tls.crt" in container["args"], "--tls-cert-file")
check("--tls-private-key-file=/var/run/serving-cert/tls.key" in container["args"],
      "--tls-private-key-file")
secret_name = volumes["serving-cert"].get("secret", {}).get("secretName")
if mode == "selfSigned":
    secret = next(d for d in docs if d["kind"] == "Secret")
    check(secret["metadata"]["name"] == secret_name, "the Deployment mounts the generated Secret")
    ca = secret["data"]["ca.crt"]
    check(b"BEGIN CERTIFICATE" in base64.b64decode(ca), "a PEM CA")
    check(all(a["spec"].get("caBundle") == ca for a in api_services), "caBundle is that CA")
elif mode == "certManager":
    kinds = {d["kind"] for d in docs}
    check({"Certificate", "Issuer"} <= kinds, "a Certificate and an Issuer")
    certificate = next(d for d in docs if d["kind"] == "Certificate")
    check(certificate["spec"]["secretName"] == secret_name, "the Deployment mounts its Secret")
    check(all(a["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from") ==
              "gpuscale/gpuscale-adapter-serving-cert" for a in api_services), "CA injection")
elif mode == "secret":
    check(secret_name == "mine", "the Deployment mounts the user's Secret")
    check(all(a["spec"].get("caBundle") == "Q0E=" for a in api_services), "the user's caBundle")
    check(not any(d["kind"] == "Secret" for d in docs), "no generated Secret")
for failure in failures:
    print("FAIL " + failure)
sys.exit(1 if failures else 0)
