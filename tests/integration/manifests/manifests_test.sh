#!/usr/bin/env bash
# Renders manifests/adapter offline and checks it (check_manifests.py).
# Exit 77 (skipped) without kubectl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
command -v openssl >/dev/null 2>&1 || {
  echo "openssl not found: skipped"
  exit 77
}
command -v kubectl >/dev/null 2>&1 || {
  echo "kubectl not found: skipped"
  exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No cluster, no network: kustomize must render from the folder alone.
kubectl kustomize "$src/manifests/adapter" >"$work/adapter.yaml"
python3 "$here/check_manifests.py" "$work/adapter.yaml" "$src"
# The base with the metrics.k8s.io component (kustomize takes relative paths only).
mkdir "$work/overlay"
base=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "$src/manifests/adapter" "$work/overlay")
printf 'resources: [%s]\ncomponents: [%s/components/resource-metrics]\n' "$base" "$base" \
  >"$work/overlay/kustomization.yaml"
kubectl kustomize "$work/overlay" >"$work/resource-metrics.yaml"
python3 "$here/check_manifests.py" "$work/resource-metrics.yaml" "$src" --resource-metrics
# With cert-manager (listed after the other component, so its APIService is annotated too).
printf 'resources: [%s]\ncomponents: [%s/components/resource-metrics, %s/components/cert-manager]\n' \
  "$base" "$base" "$base" >"$work/overlay/kustomization.yaml"
kubectl kustomize "$work/overlay" >"$work/cert-manager.yaml"
python3 "$here/check_manifests.py" "$work/cert-manager.yaml" "$src" --resource-metrics --cert-manager
# The manual path of docs/operations.md: the overlay's own CA and serving pair.
mkdir "$work/manual"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=test-ca \
  -keyout "$work/manual/ca.key" -out "$work/manual/ca.crt" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -CA "$work/manual/ca.crt" -CAkey "$work/manual/ca.key" -subj /CN=gpuscale-adapter \
  -addext subjectAltName=DNS:gpuscale-adapter.gpuscale.svc \
  -keyout "$work/manual/tls.key" -out "$work/manual/tls.crt" 2>/dev/null
python3 - "$src/docs/operations.md" "$base" >"$work/manual/kustomization.yaml" <<'PY'
import re, sys, textwrap
# The overlay exactly as the guide shows it, with the base's path of this checkout.
text = open(sys.argv[1]).read()
found = re.search(r"<!-- manual-overlay -->\n( *)```yaml\n(.*?)\n\1```", text, re.S)
block = textwrap.dedent(found.group(2)) + "\n"
print(block.replace("../gpuscale/manifests/adapter", sys.argv[2]), end="")
PY
kubectl kustomize "$work/manual" >"$work/manual.yaml"
python3 "$here/check_manifests.py" "$work/manual.yaml" "$src" "--ca-file=$work/manual/ca.crt"
