#!/usr/bin/env bash
# Renders manifests/adapter offline and checks it (check_manifests.py).
# Exit 77 (skipped) without kubectl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
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
