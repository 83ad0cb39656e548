"""Checks that a chart render is named and wired after one full name: every object the chart names
starts with PREFIX ("<fullname>-"), and everything that refers to another object by name or by
labels finds it (selectors against pod labels, ServiceAccounts, ConfigMaps, Secrets, the
APIServices' Service, the serving certificate's names, the reconciler's Lease and state ConfigMap
against its RBAC). With EXTRA_LABELS (k=v,...) the pods also carry those labels, and no selector
does.

usage: check_names.py RENDER PREFIX [EXTRA_LABELS]"""
import base64
import sys

import yaml

path, prefix = sys.argv[1], sys.argv[2]
extra = dict(kv.split("=", 1) for kv in sys.argv[3].split(",")) if len(sys.argv) > 3 else {}
docs = [d for d in yaml.safe_load_all(open(path)) if d]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def of_kind(kind):
    return [d for d in docs if d["kind"] == kind]


def name(d):
    return d["metadata"]["name"]


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


# Objects named by the chart (APIServices have the API's name; bindings to built-in roles and the
# role in kube-system keep the prefix too).
for d in docs:
    if d["kind"] == "APIService":
        continue
    check(name(d).startswith(prefix), f"{d['kind']} {name(d)} starts with {prefix}")

deployments = {name(d): d for d in of_kind("Deployment")}
service_accounts = {name(d) for d in of_kind("ServiceAccount")}
config_maps = {name(d) for d in of_kind("ConfigMap")}
# Secrets the render makes, or that cert-manager makes from a Certificate of the render.
secrets = {name(d) for d in of_kind("Secret")} | {d["spec"]["secretName"] for d in of_kind("Certificate")}
for d in deployments.values():
    pod = d["spec"]["template"]
    labels = pod["metadata"]["labels"]
    selector = d["spec"]["selector"]["matchLabels"]
    check(matches(selector, labels), f"Deployment {name(d)}: selector matches its pods")
    check(not set(extra) & set(selector), f"Deployment {name(d)}: podLabels stay out of the selector")
    check(matches(extra, labels), f"Deployment {name(d)}: pods carry podLabels {extra}")
    sa = pod["spec"]["serviceAccountName"]
    check(sa in service_accounts, f"Deployment {name(d)}: ServiceAccount {sa} rendered")
    for v in pod["spec"].get("volumes", []):
        if "configMap" in v:
            check(v["configMap"]["name"] in config_maps, f"{name(d)}: ConfigMap {v['configMap']['name']}")
    anti = (pod["spec"].get("affinity", {}).get("podAntiAffinity", {})
            .get("preferredDuringSchedulingIgnoredDuringExecution", []))
    for term in anti:
        check(term["podAffinityTerm"]["labelSelector"]["matchLabels"] == selector,
              f"Deployment {name(d)}: anti-affinity selects its own pods")


def pods_selected(selector):
    return [n for n, d in deployments.items()
            if matches(selector, d["spec"]["template"]["metadata"]["labels"])]


for d in of_kind("Service"):
    check(len(pods_selected(d["spec"]["selector"])) == 1, f"Service {name(d)} selects one Deployment")
for kind in ("PodDisruptionBudget", "NetworkPolicy"):
    for d in of_kind(kind):
        sel = d["spec"]["selector" if kind == "PodDisruptionBudget" else "podSelector"]["matchLabels"]
        check(len(pods_selected(sel)) == 1, f"{kind} {name(d)} selects one Deployment")
for kind in ("RoleBinding", "ClusterRoleBinding"):
    for d in of_kind(kind):
        for s in d.get("subjects", []):
            if s["kind"] == "ServiceAccount" and s["namespace"] != "kube-system" and \
                    not name(d).endswith(":prometheus"):
                check(s["name"] in service_accounts, f"{kind} {name(d)}: subject {s['name']} rendered")
        ref = d["roleRef"]
        if ref["name"].startswith(prefix):
            check(ref["name"] in {name(r) for r in of_kind(ref["kind"])},
                  f"{kind} {name(d)}: {ref['kind']} {ref['name']} rendered")

services = {name(d) for d in of_kind("Service")}
adapter = next((d for n, d in deployments.items() if n.endswith("-adapter")), None)
for d in of_kind("APIService"):
    check(d["spec"]["service"]["name"] in services, f"APIService {name(d)}: its Service is rendered")
    check(adapter is not None and d["spec"]["service"]["name"] == name(adapter),
          f"APIService {name(d)}: the adapter's Service")
# The serving pairs the Deployments mount (the adapter's, the reconciler's status listener's) name
# their Deployment's Service; the chart's CA Secret is mounted by none.
mounted = {}
for n, d in deployments.items():
    for v in d["spec"]["template"]["spec"].get("volumes", []):
        if "secret" in v and v["name"] in ("serving-cert", "status-cert"):
            check(v["secret"]["secretName"] in secrets, f"{n}: Secret {v['secret']['secretName']}")
            mounted[v["secret"]["secretName"]] = n
for d in of_kind("Secret"):
    crt = d.get("data", {}).get("tls.crt")
    if crt and name(d) in mounted:
        pem = base64.b64decode(crt).decode()
        der = base64.b64decode("".join(l for l in pem.splitlines() if not l.startswith("-----")))
        check(f"{mounted[name(d)]}.gpuscale.svc".encode() in der,
              f"Secret {name(d)}: the certificate names the Service {mounted[name(d)]}")
for d in of_kind("PodMonitor"):
    for endpoint in d["spec"]["podMetricsEndpoints"]:
        tls = endpoint.get("tlsConfig", {})
        if "serverName" in tls:
            check(tls["serverName"] == f"{name(d)}.gpuscale.svc", f"PodMonitor {name(d)}: serverName")
            check(tls["ca"]["secret"]["name"] in secrets, f"PodMonitor {name(d)}: its CA's Secret")

reconciler = next((d for n, d in deployments.items() if n.endswith("-reconciler")), None)
if reconciler is not None:
    args = dict(a[2:].split("=", 1) for a in
                reconciler["spec"]["template"]["spec"]["containers"][0]["args"] if "=" in a)
    granted = set()
    for r in of_kind("Role"):
        for rule in r["rules"]:
            granted.update(rule.get("resourceNames", []))
    for flag in ("leader-elect-name", "state-config-map"):
        check(args.get(flag, "").startswith(prefix), f"--{flag}={args.get(flag)} starts with {prefix}")
        check(args.get(flag) in granted, f"--{flag}={args.get(flag)} is a resourceName of a Role")
    # The admission policies name the reconciler's ServiceAccount, its Lease and its ConfigMaps as
    # the Deployment does, and every binding binds a rendered policy.
    policies = {name(d): d for d in of_kind("ValidatingAdmissionPolicy")}
    for d in of_kind("ValidatingAdmissionPolicyBinding"):
        check(d["spec"]["policyName"] in policies, f"binding {name(d)}: its policy is rendered")
    sa = reconciler["spec"]["template"]["spec"]["serviceAccountName"]
    ns = reconciler["metadata"]["namespace"]
    state = f"{args.get('state-namespace', '').replace('$(POD_NAMESPACE)', ns)}/{args.get('state-config-map')}"
    operator = args.get("operator-namespace")
    owned = [state, f"{ns}/{args.get('leader-elect-name')}",
             f"{operator}/{args.get('mig-config-map')}", f"{operator}/{args.get('device-plugin-config-map')}"]
    for d in policies.values():
        text = yaml.safe_dump(d["spec"], width=1000)
        check(f"system:serviceaccount:{ns}:{sa}" in text, f"policy {name(d)}: names ServiceAccount {ns}/{sa}")
        if name(d).endswith("-scope"):
            for o in owned:
                check(f"'{o}'" in text, f"policy {name(d)}: names {o}")

for failure in failures:
    print("FAIL " + failure)
print(f"{len(docs)} objects, {len(failures)} naming failure(s)")
sys.exit(1 if failures else 0)
