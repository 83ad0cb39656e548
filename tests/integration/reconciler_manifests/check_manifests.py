"""Checks the rendered reconciler and example manifests (argv: reconciler.yaml examples.yaml)."""
import sys

import yaml


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def find(docs, kind, name=None):
    out = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert out, f"no {kind} {name or ''}"
    return out


SA = {"kind": "ServiceAccount", "name": "gpuscale-reconciler", "namespace": "gpuscale"}


def bound(docs, kind, role, namespace=None):
    return any(b["roleRef"]["name"] == role and SA in b.get("subjects", []) and
               (namespace is None or b["metadata"].get("namespace") == namespace)
               for b in docs if b["kind"] == kind)


def check_status_listener(rec, dep, c):
    """Probes on the plain port; /metrics, /plan, /leader on the secure one, reachable as the
    NetworkPolicy, Service and RBAC say."""
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    args = c["args"]
    assert f"--health-bind-address=0.0.0.0:{ports['probes']}" in args, args
    assert f"--secure-status-bind-address=0.0.0.0:{ports['https-status']}" in args, args
    for probe in ("livenessProbe", "readinessProbe"):
        assert c[probe]["httpGet"]["port"] == "probes", c[probe]
        assert c[probe]["httpGet"].get("scheme", "HTTP") == "HTTP", c[probe]
    # TokenReview/SubjectAccessReview create, and the client CA of the authentication ConfigMap.
    assert bound(rec, "ClusterRoleBinding", "system:auth-delegator"), "auth-delegator binding"
    assert bound(rec, "RoleBinding", "extension-apiserver-authentication-reader", "kube-system")
    svc = find(rec, "Service", "gpuscale-reconciler")[0]
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"], svc
    assert [p["targetPort"] for p in svc["spec"]["ports"]] == ["https-status"], svc
    netpol = find(rec, "NetworkPolicy", "gpuscale-reconciler")[0]
    spec = netpol["spec"]
    assert netpol["apiVersion"] == "networking.k8s.io/v1", netpol
    assert spec["podSelector"]["matchLabels"] == dep["spec"]["template"]["metadata"]["labels"]
    assert spec["policyTypes"] == ["Ingress"], spec
    allowed = {(p["protocol"], p["port"]) for rule in spec["ingress"] for p in rule["ports"]}
    assert allowed == {("TCP", ports["probes"]), ("TCP", ports["https-status"])}, allowed
    readers = {d["metadata"]["name"]: d for d in rec if d["kind"] == "ClusterRole"}
    assert readers["gpuscale-reconciler:metrics-reader"]["rules"] == [
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def main():
    rec = load(sys.argv[1])
    ex = load(sys.argv[2])
    dep = find(rec, "Deployment", "gpuscale-reconciler")[0]
    assert dep["spec"]["replicas"] == 2, "two replicas"
    c = dep["spec"]["template"]["spec"]["containers"][0]
    args = c["args"]
    assert args[0] == "run" and "--leader-elect=true" in args, args
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    check_status_listener(rec, dep, c)
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    vols = dep["spec"]["template"]["spec"]["volumes"]
    cm_name = vols[0]["configMap"]["name"]
    assert cm_name.startswith("gpuscale-reconciler-policy"), cm_name
    find(rec, "ConfigMap", cm_name)
    find(rec, "ServiceAccount", "gpuscale-reconciler")
    # RBAC per mode: check_rbac.py. The state ConfigMap lives in the reconciler's own namespace.
    assert "--state-namespace=$(POD_NAMESPACE)" in args, args
    state = find(rec, "Role", "gpuscale-reconciler-state")[0]
    assert state["metadata"]["namespace"] == "gpuscale", state
    assert state["rules"] == [{"apiGroups": [""], "resources": ["configmaps"],
                               "resourceNames": ["gpuscale-reconciler-state"], "verbs": ["get"]}]
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    # Every policy names the HPAs it may manage.
    policy = yaml.safe_load(find(rec, "ConfigMap", cm_name)[0]["data"]["policy.yaml"])
    for p in policy["policies"]:
        assert p.get("hpaNamespaces") or p.get("hpas"), p
    hpa = find(ex, "HorizontalPodAutoscaler", "triton")[0]
    assert hpa["metadata"]["annotations"]["gpuscale.io/partition-policy"] == "inference"
    assert hpa["spec"]["maxReplicas"] == 7
    tdep = find(ex, "Deployment", "triton")[0]
    limits = tdep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert "nvidia.com/mig-1g.5gb" in limits
    print("checked", len(rec), "reconciler objects and", len(ex), "example objects")


if __name__ == "__main__":
    main()
