"""Checks that the values of extra-values.yaml reach both Deployments' pods as given, next to what
the chart itself puts there. Usage: check_extras.py RENDER.yaml"""
import sys

import yaml

want = {
    "gpuscale-adapter": ("AWS_REGION", "aws", "/var/run/aws", "checksum/rules"),
    "gpuscale-reconciler": ("TZ", "extra", "/extra", None),
}
failures = []
deployments = [d for d in yaml.safe_load_all(open(sys.argv[1]))
               if d and d["kind"] == "Deployment"]
for d in deployments:
    name = d["metadata"]["name"]
    env, volume, mount, kept_annotation = want.pop(name)
    pod = d["spec"]["template"]
    container = pod["spec"]["containers"][0]
    annotations = pod["metadata"].get("annotations", {})
    checks = {
        "imagePullSecrets": pod["spec"].get("imagePullSecrets") == [{"name": "regcred"}],
        "extraEnv": env in [e["name"] for e in container.get("env", [])],
        "extraVolumes": volume in [v["name"] for v in pod["spec"]["volumes"]],
        "extraVolumeMounts": mount in [m["mountPath"] for m in container["volumeMounts"]],
        "podAnnotations": annotations.get("example.com/team") == "ml",
        "the chart's own annotation kept": kept_annotation is None or kept_annotation in annotations,
    }
    failures += ["%s: %s" % (name, what) for what, ok in checks.items() if not ok]
failures += ["%s: no Deployment" % name for name in want]
for f in failures:
    print("missing: " + f)
sys.exit(1 if failures else 0)
