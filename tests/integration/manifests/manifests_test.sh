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
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# No cluster, no network: kustomize must render from the folder alone.
kubectl kustomize "$src/manifests/adapter" >"$out"
python3 "$here/check_manifests.py" "$out" "$src"
