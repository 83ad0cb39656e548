#!/usr/bin/env bash
# Usage: manifests_test.sh GPUSCALE_RECONCILER. Renders manifests/reconciler (observe), the base
# with components/act, and manifests/examples, and checks them. Exit 77 (skipped) without kubectl.
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
# The base observes with read-only RBAC (Events and its Lease aside); components/act switches it to
# act and adds the write grants. Kustomize takes only relative paths to bases and components.
python3 "$here/check_rbac.py" "$work/reconciler.yaml" observe
mkdir -p "$work/act"
base=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "$src/manifests/reconciler" "$work/act")
printf 'resources: [%s]\ncomponents: [%s/components/act]\n' "$base" "$base" >"$work/act/kustomization.yaml"
kubectl kustomize "$work/act" >"$work/reconciler-act.yaml"
python3 "$here/check_rbac.py" "$work/reconciler-act.yaml" act
# The shipped policies must parse: plan against an empty cluster.
echo '{"apiVersion":"v1","kind":"List","items":[]}' >"$work/empty.json"
"$bin" plan --from "$work/empty.json" --policy "$src/manifests/reconciler/policy.yaml" >/dev/null
"$bin" plan --from "$work/empty.json" --policy "$src/manifests/examples/triton-policy.yaml" >/dev/null
cmp "$src/manifests/reconciler/policy.yaml" "$src/manifests/examples/triton-policy.yaml"
# The GPUCapacityRequest CRD ships once, in both the kustomize base and the chart's crds/.
cmp "$src/manifests/crds/gpucapacityrequests.yaml" "$src/charts/gpuscale/crds/gpucapacityrequests.yaml"
grep -q '^kind: CustomResourceDefinition' "$work/reconciler.yaml"
echo "manifests ok"
