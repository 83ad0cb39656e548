#!/usr/bin/env bash
# Usage: manifests_test.sh GPUSCALE_RECONCILER. Exit 77 (skipped) without kubectl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
bin=$1
command -v kubectl >/dev/null 2>&1 || { echo "kubectl not found: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kubectl kustomize "$src/manifests/reconciler" >"$work/reconciler.yaml"
kubectl kustomize "$src/manifests/examples" >"$work/examples.yaml"
python3 "$here/check_manifests.py" "$work/reconciler.yaml" "$work/examples.yaml"
# The shipped policies must parse: plan against an empty cluster.
echo '{"apiVersion":"v1","kind":"List","items":[]}' >"$work/empty.json"
"$bin" plan --from "$work/empty.json" --policy "$src/manifests/reconciler/policy.yaml" >/dev/null
"$bin" plan --from "$work/empty.json" --policy "$src/manifests/examples/triton-policy.yaml" >/dev/null
cmp "$src/manifests/reconciler/policy.yaml" "$src/manifests/examples/triton-policy.yaml"
echo "manifests ok"
