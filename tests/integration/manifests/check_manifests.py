#!/usr/bin/env python3
"""Checks the rendered adapter manifests against what an install needs of them (the Dockerfile has
its own check, tests/integration/images)."""
import base64
import sys

import yaml

rendered, src = sys.argv[1], sys.argv[2]
# With the resource-metrics component (components/resource-metrics): metrics.k8s.io too.
resource_metrics = "--resource-metrics" in sys.argv[3:]
# How the aggregator gets the CA: none in the base (the overlay must add it), injected by
# cert-manager (--cert-manager: components/cert-manager), or from the overlay's own CA file
# (--ca-file=PATH: the documented manual path, a secretGenerator and a replacement).
cert_manager = "--cert-manager" in sys.argv[3:]
ca_file = next((a.split("=", 1)[1] for a in sys.argv[3:] if a.startswith("--ca-file=")), None)
docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def find(kind, name=None, namespace=None):
    for d in docs:
        meta = d.get("metadata", {})
        if d["kind"] == kind and (name is None or meta.get("name") == name) and (
                namespace is None or meta.get("namespace") == namespace):
            return d
    return None


def all_of(kind):
    return [d for d in docs if d["kind"] == kind]


NS = "gpuscale"
SA = {"kind": "ServiceAccount", "name": "gpuscale-adapter", "namespace": NS}

check(find("Namespace", NS), "Namespace gpuscale")
check(find("ServiceAccount", "gpuscale-adapter", NS), "ServiceAccount")

# Deployment.
deploy = find("Deployment", "gpuscale-adapter", NS) or {}
spec = deploy.get("spec", {})
pod = spec.get("template", {}).get("spec", {})
check(spec.get("replicas") == 2, "Deployment has 2 replicas")
check(pod.get("serviceAccountName") == "gpuscale-adapter", "Deployment runs as the ServiceAccount")
anti = pod.get("affinity", {}).get("podAntiAffinity", {})
terms = anti.get("preferredDuringSchedulingIgnoredDuringExecution", []) + [
    {"podAffinityTerm": t} for t in anti.get("requiredDuringSchedulingIgnoredDuringExecution", [])]
check(any(t["podAffinityTerm"].get("topologyKey") == "kubernetes.io/hostname" for t in terms),
      "pod anti-affinity across hosts")
check(pod.get("securityContext", {}).get("runAsNonRoot") is True, "runAsNonRoot")
containers = pod.get("containers", [])
check(len(containers) == 1, "one container")
for c in containers:
    sc = c.get("securityContext", {})
    check(sc.get("readOnlyRootFilesystem") is True, "read-only root filesystem")
    check(sc.get("allowPrivilegeEscalation") is False, "no privilege escalation")
    check("ALL" in sc.get("capabilities", {}).get("drop", []), "capabilities dropped")
    res = c.get("resources", {})
    check(res.get("requests", {}).get("cpu") and res.get("requests", {}).get("memory"),
          "resource requests")
    check(res.get("limits", {}).get("memory"), "memory limit")
    check(c.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/livez", "liveness /livez")
    check(c.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz",
          "readiness /readyz")
    for probe in ("livenessProbe", "readinessProbe"):
        check(c.get(probe, {}).get("httpGet", {}).get("scheme") == "HTTPS", probe + " over HTTPS")
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    args = c.get("args", [])
    check(f"--secure-port={ports.get('https')}" in args, "--secure-port matches the https port")
    check(any(a.startswith("--metrics-bind-address=") and a.endswith(f":{ports.get('metrics')}")
              for a in args), "--metrics-bind-address matches the metrics port")
    mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
    check({"/tmp", "/var/run/serving-cert", "/etc/adapter"} <= mounts,
          "writable /tmp and serving-cert, config mounted")
    check("--config=/etc/adapter/config.yaml" in args, "--config points at the mounted rules")
    check("--tls-cert-file=/var/run/serving-cert/tls.crt" in args and
          "--tls-private-key-file=/var/run/serving-cert/tls.key" in args,
          "the serving pair comes from the mounted Secret")
    check(("--resource-metrics=true" in args) == resource_metrics,
          "--resource-metrics=true exactly with the component")

# ConfigMap from rules/triton.yaml, referenced by the Deployment under its generated name.
volumes = {v["name"]: v for v in pod.get("volumes", [])}
cm_name = volumes.get("config", {}).get("configMap", {}).get("name")
cm = find("ConfigMap", cm_name, NS)
check(cm is not None, "Deployment references the generated ConfigMap")
if cm:
    check(cm["data"].get("config.yaml") == open(f"{src}/rules/triton.yaml").read(),
          "ConfigMap holds rules/triton.yaml unchanged (manifests/adapter/rules/triton.yaml in sync)")

# The serving certificate: the Secret the Deployment mounts, from cert-manager or the overlay.
serving = volumes.get("serving-cert", {}).get("secret", {}).get("secretName")
check(serving == "gpuscale-adapter-serving-cert", "the Deployment mounts gpuscale-adapter-serving-cert")
if cert_manager:
    certificate = find("Certificate", "gpuscale-adapter-serving-cert", NS) or {}
    cspec = certificate.get("spec", {})
    check(cspec.get("secretName") == serving, "the Certificate writes that Secret")
    check("gpuscale-adapter.gpuscale.svc" in cspec.get("dnsNames", []),
          "the Certificate names the Service the aggregator dials")
    issuer = find("Issuer", cspec.get("issuerRef", {}).get("name"), NS) or {}
    ca = find("Certificate", issuer.get("spec", {}).get("ca", {}).get("secretName"), NS) or {}
    check(ca.get("spec", {}).get("isCA") is True, "signed by a CA Issuer (renewals keep the CA)")
if ca_file:
    secret = find("Secret", serving, NS) or {}
    check(secret.get("type") == "kubernetes.io/tls", "the overlay's Secret is kubernetes.io/tls")

# Service, PDB, APIServices.
svc = find("Service", "gpuscale-adapter", NS) or {}
svc_ports = {p["port"]: p for p in svc.get("spec", {}).get("ports", [])}
check(443 in svc_ports and svc_ports[443].get("targetPort") == "https", "Service 443 -> https")
check(svc.get("spec", {}).get("selector") == spec.get("selector", {}).get("matchLabels"),
      "Service selects the Deployment's pods")
pdb = find("PodDisruptionBudget", "gpuscale-adapter", NS) or {}
check(pdb.get("spec", {}).get("minAvailable") == 1, "PDB minAvailable 1")
check(pdb.get("spec", {}).get("selector", {}).get("matchLabels") ==
      spec.get("selector", {}).get("matchLabels"), "PDB selects the Deployment's pods")
api_services = [("v1beta1.custom.metrics.k8s.io", "custom.metrics.k8s.io", "v1beta1"),
                ("v1beta2.custom.metrics.k8s.io", "custom.metrics.k8s.io", "v1beta2"),
                ("v1beta1.external.metrics.k8s.io", "external.metrics.k8s.io", "v1beta1")]
if resource_metrics:
    api_services.append(("v1beta1.metrics.k8s.io", "metrics.k8s.io", "v1beta1"))
for name, group, version in api_services:
    api = find("APIService", name) or {}
    s = api.get("spec", {})
    check(s.get("group") == group and s.get("version") == version, f"APIService {name}")
    check(s.get("service") == {"name": "gpuscale-adapter", "namespace": NS, "port": 443},
          f"APIService {name} points at the Service")
    check(s.get("groupPriorityMinimum") and s.get("versionPriority"), f"{name} priorities")
    check(not s.get("insecureSkipTLSVerify"), f"{name} verifies the adapter's certificate")
    injected = api.get("metadata", {}).get("annotations", {}).get("cert-manager.io/inject-ca-from")
    check((injected == "gpuscale/gpuscale-adapter-serving-cert") == cert_manager,
          f"{name}: CA injected from the serving Certificate exactly with the component")
    if ca_file:
        bundle = base64.b64decode(s.get("caBundle", "")).decode()
        check(bundle == open(ca_file).read(), f"{name}: caBundle is the overlay's CA")
    else:
        check(not s.get("caBundle"), f"{name}: no caBundle of the base's own")
check(len(all_of("APIService")) == len(api_services), f"exactly {len(api_services)} APIServices")

# NetworkPolicy: ingress only to the secure port (kube-apiserver, probes) and the metrics port.
netpol = find("NetworkPolicy", "gpuscale-adapter", NS) or {}
np_spec = netpol.get("spec", {})
check(netpol.get("apiVersion") == "networking.k8s.io/v1", "NetworkPolicy networking.k8s.io/v1")
check(np_spec.get("podSelector", {}).get("matchLabels") ==
      spec.get("template", {}).get("metadata", {}).get("labels"),
      "NetworkPolicy selects the Deployment's pods")
check(np_spec.get("policyTypes") == ["Ingress"], "NetworkPolicy restricts ingress")
allowed = {(p.get("protocol"), p.get("port")) for rule in np_spec.get("ingress", [])
           for p in rule.get("ports", [])}
container_ports = {p["name"]: p["containerPort"] for c in containers for p in c.get("ports", [])}
check(allowed == {("TCP", container_ports.get("https")), ("TCP", container_ports.get("metrics"))},
      f"NetworkPolicy admits exactly the https and metrics ports, got {allowed}")

# RBAC: least privilege.
def bound(kind, role, subject, namespace=None):
    for b in all_of(kind):
        if namespace and b["metadata"].get("namespace") != namespace:
            continue
        if b["roleRef"]["name"] == role and subject in b.get("subjects", []):
            return True
    return False


check(bound("ClusterRoleBinding", "system:auth-delegator", SA), "auth-delegator binding")
check(bound("RoleBinding", "extension-apiserver-authentication-reader", SA, "kube-system"),
      "extension-apiserver-authentication-reader RoleBinding in kube-system")
hpa = {"kind": "ServiceAccount", "name": "horizontal-pod-autoscaler", "namespace": "kube-system"}
hpa_roles = [b["roleRef"]["name"] for b in all_of("ClusterRoleBinding") if hpa in b.get("subjects", [])]
check(hpa_roles, "HPA controller bound to a metrics reader role")
for role in all_of("ClusterRole") + all_of("Role"):
    for rule in role.get("rules", []):
        verbs = set(rule.get("verbs", []))
        check(verbs <= {"get", "list", "watch"}, f"{role['metadata']['name']}: read-only verbs {verbs}")
        check("secrets" not in rule.get("resources", []), f"{role['metadata']['name']}: no secrets")
        groups = set(rule.get("apiGroups", []))
        if "*" in rule.get("resources", []):
            check(groups <= {"custom.metrics.k8s.io", "external.metrics.k8s.io"},
                  f"{role['metadata']['name']}: wildcard only on the metrics groups")
sa_roles = [b["roleRef"]["name"] for b in all_of("ClusterRoleBinding") if SA in b.get("subjects", [])]
reads = set()
for role in all_of("ClusterRole"):
    if role["metadata"]["name"] in sa_roles:
        for rule in role["rules"]:
            reads.update(rule.get("resources", []))
expected_reads = {"pods", "namespaces"} | ({"nodes"} if resource_metrics else set())
check(reads == expected_reads, f"adapter reads exactly {expected_reads}, got {reads}")

if failures:
    print("manifest check failed:")
    for f in failures:
        print("  -", f)
    sys.exit(1)
print(f"manifests ok: {len(docs)} objects")
