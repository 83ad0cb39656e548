"""Checks that the values of extra-values.yaml reach both Deployments' pods (and their
ServiceAccounts) as given, next to what the chart itself puts there: the chart's annotation, its
securityContext defaults (a value merges into them), and the user's affinity in place of the chart's
anti-affinity. Usage: check_extras.py RENDER.yaml"""
import sys

import yaml

want = {
    "gpuscale-adapter": ("AWS_REGION", "aws", "/var/run/aws", "checksum/rules", "sigv4-proxy",
                         "eks.amazonaws.com/role-arn"),
    "gpuscale-reconciler": ("TZ", "extra", "/extra", None, "log-shipper",
                            "iam.gke.io/gcp-service-account"),
}
failures = []
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
accounts = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ServiceAccount"}
for d in (d for d in docs if d["kind"] == "Deployment"):
    name = d["metadata"]["name"]
    env, volume, mount, kept_annotation, sidecar, account_annotation = want.pop(name)
    pod = d["spec"]["template"]
    spec = pod["spec"]
    container = spec["containers"][0]
    annotations = pod["metadata"].get("annotations", {})
    account = accounts.get(spec["serviceAccountName"], {})
    affinity = spec.get("affinity", {})
    checks = {
        "imagePullSecrets": spec.get("imagePullSecrets") == [{"name": "regcred"}],
        "extraEnv": env in [e["name"] for e in container.get("env", [])],
        "extraVolumes": volume in [v["name"] for v in spec["volumes"]],
        "extraVolumeMounts": mount in [m["mountPath"] for m in container["volumeMounts"]],
        "extraContainers": [c["name"] for c in spec["containers"][1:]] == [sidecar],
        "podAnnotations": annotations.get("example.com/team") == "ml",
        "the chart's own annotation kept": kept_annotation is None or kept_annotation in annotations,
        "podLabels": pod["metadata"]["labels"].get("example.com/tier") == "metrics",
        "serviceAccount.annotations": account_annotation in
        account.get("metadata", {}).get("annotations", {}),
        "affinity replaces the chart's anti-affinity": "nodeAffinity" in affinity
        and "podAntiAffinity" not in affinity,
        "topologySpreadConstraints": [c["topologyKey"] for c in
                                      spec.get("topologySpreadConstraints", [])] ==
        ["topology.kubernetes.io/zone"],
        "tolerations": [t["key"] for t in spec.get("tolerations", [])] == ["dedicated"],
        "podSecurityContext merged with the defaults": spec["securityContext"].get("fsGroup") ==
        65532 and spec["securityContext"].get("runAsNonRoot") is True,
        "securityContext merged with the defaults": container["securityContext"].get("privileged")
        is False and container["securityContext"].get("readOnlyRootFilesystem") is True,
    }
    failures += ["%s: %s" % (name, what) for what, ok in checks.items() if not ok]
failures += ["%s: no Deployment" % name for name in want]
for f in failures:
    print("missing: " + f)
sys.exit(1 if failures else 0)
