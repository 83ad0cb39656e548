"""Compares a `helm template` render of the chart with the kustomize renders of manifests/, in
substance: the same objects (kind, namespace, name) with the same content, apart from what only
one of the two tools adds (labels and annotations, kustomize's ConfigMap name hashes and its
Namespace object, the chart's checksum annotation). ConfigMap payloads are compared as parsed YAML.

usage: compare_renders.py HELM_RENDER KUSTOMIZE_RENDER..."""
import difflib
import json
import re
import sys

import yaml

HASHED = re.compile(r"\b(gpuscale-adapter-config|gpuscale-reconciler-policy)-[a-z0-9]{10}\b")


def normalized(document):
    text = HASHED.sub(r"\1", json.dumps(document, sort_keys=True))
    doc = json.loads(text)
    meta = doc.get("metadata", {})
    doc["metadata"] = {k: meta[k] for k in ("name", "namespace") if k in meta}
    template = doc.get("spec", {}).get("template", {}).get("metadata")
    if template is not None:
        template.pop("annotations", None)
    if doc.get("kind") == "ConfigMap":
        doc["data"] = {k: yaml.safe_load(v) for k, v in doc.get("data", {}).items()}
    return doc


def objects(paths):
    out = {}
    for path in paths:
        for doc in yaml.safe_load_all(open(path)):
            if not doc or doc.get("kind") == "Namespace":
                continue
            doc = normalized(doc)
            key = (doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])
            out[key] = doc
    return out


helm, kustomize = objects(sys.argv[1:2]), objects(sys.argv[2:])
failures = []
for key in sorted(set(helm) | set(kustomize)):
    if key not in helm:
        failures.append(f"only in kustomize: {key}")
    elif key not in kustomize:
        failures.append(f"only in the chart: {key}")
    elif helm[key] != kustomize[key]:
        a = yaml.safe_dump(helm[key], sort_keys=True).splitlines()
        b = yaml.safe_dump(kustomize[key], sort_keys=True).splitlines()
        diff = "\n".join(difflib.unified_diff(b, a, "kustomize", "chart", lineterm="", n=2))
        failures.append(f"differs: {key}\n{diff}")
for failure in failures:
    print("FAIL " + failure)
print(f"{len(helm)} chart objects, {len(kustomize)} kustomize objects, {len(failures)} difference(s)")
sys.exit(1 if failures else 0)
