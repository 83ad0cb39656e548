"""Checks the reconciler's RBAC in a render (kustomize or helm) for a mode: what the roles bound to
the reconciler's ServiceAccount let it write. Observe mode writes only Events and its Lease; act
mode adds patches of Nodes, HPAs and ScaledObjects, GPUCapacityRequests' status and its ConfigMaps. In both: no wildcard verb or
resource, no Secrets, no delete, ConfigMap and Lease updates only by name; and list and watch on every
kind the controller watches (the DRA kinds included).

usage: check_rbac.py RENDER observe|act"""
import sys

import yaml

WRITES = {"create", "update", "patch", "delete", "deletecollection"}
EXPECTED = {
    "observe": {"events": {"create", "patch"}, "leases": {"create", "update"}},
    "act": {"events": {"create", "patch"}, "leases": {"create", "update"},
            "nodes": {"patch"}, "horizontalpodautoscalers": {"patch"}, "scaledobjects": {"patch"},
            "gpucapacityrequests/status": {"patch"}, "configmaps": {"create", "update", "patch"}},
}
# What the controller's informers list and watch (reconciler/controller.h: watchedResources()).
WATCHED = {"nodes", "pods", "horizontalpodautoscalers", "deployments", "statefulsets", "configmaps",
           "resourceslices", "deviceclasses", "resourceclaimtemplates", "resourceclaims",
           "gpucapacityrequests"}


def main():
    path, mode = sys.argv[1], sys.argv[2]
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    dep = next(d for d in docs if d["kind"] == "Deployment" and
               d["metadata"]["name"].endswith("-reconciler"))
    pod = dep["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert f"--mode={mode}" in args, f"the Deployment does not run --mode={mode}: {args}"
    subject = {"kind": "ServiceAccount", "name": pod["serviceAccountName"],
               "namespace": dep["metadata"]["namespace"]}
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
             for d in docs if d["kind"] in ("Role", "ClusterRole")}
    writes = {}
    reads = {}
    for b in docs:
        if b["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if subject not in b.get("subjects", []):
            continue
        ref = b["roleRef"]
        ns = b["metadata"].get("namespace", "") if ref["kind"] == "Role" else ""
        role = roles.get((ref["kind"], ns, ref["name"]))
        if role is None:  # a built-in role (system:auth-delegator, the authentication reader)
            continue
        for rule in role["rules"]:
            assert "nonResourceURLs" not in rule, rule
            assert "*" not in rule["verbs"] and "*" not in rule["resources"], rule
            assert "secrets" not in rule["resources"], rule
            for r in rule["resources"]:
                reads.setdefault(r, set()).update({"list", "watch"} & set(rule["verbs"]))
            written = WRITES & set(rule["verbs"])
            for r in rule["resources"] if written else []:
                writes.setdefault(r, set()).update(written)
                if r in ("configmaps", "leases") and written - {"create"}:
                    assert rule.get("resourceNames"), f"{r} {written} limited by name: {rule}"
    assert writes == EXPECTED[mode], f"{mode} mode writes {writes}, expected {EXPECTED[mode]}"
    unwatched = sorted(r for r in WATCHED if reads.get(r) != {"list", "watch"})
    assert not unwatched, f"{mode}: no list and watch on {unwatched}"
    print(f"{mode}: the reconciler may write {sorted(writes)} and nothing else")


if __name__ == "__main__":
    main()
