#!/usr/bin/env bash
# GPUCapacityRequests live: planners ask for partitions with `kubectl apply`, the reconciler grants
# them through each request's status. On the single-strategy A100 of
# reconciler/single_scenario.yaml (seven MIG devices as nvidia.com/gpu, time-slicing up to 4 per
# device: at most 28), with the CRD installed and the reconciler in act mode (manifests/reconciler's
# RBAC and admission policies: it may write a request's status, nothing else of it):
#   1. `high` (priority 100) and `low` (priority 0), applied together, each ask for 20 replicas of
#      nvidia.com/gpu: more than the node holds untouched (7) and together more than it can hold
#      (28). The reconciler time-slices the devices and grants `high` first: Granted True,
#      grantedReplicas 20, a Granted Event on the request; `low` is held short (Granted False,
#      with the reason) and has a Blocked Event;
#   2. `stray`, with no policy annotation, is managed by no policy: Granted False, reason
#      NotManaged, nothing granted, a Blocked Event;
#   3. deleting `high` gives its capacity back: `low` is then granted its 20.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../reconciler/lib.sh
source "$(dirname "$0")/../reconciler/lib.sh"
reconciler_test_init capacity-request
node=gpu-a100-0
started=$SECONDS

step "start the control plane, the GPUCapacityRequest CRD, gpuscale-sim and the reconciler"
e2e_cluster_up --scenario "$here/single_scenario.yaml"
kc apply -f "$src/manifests/crds/gpucapacityrequests.yaml" >/dev/null
kc wait --for=condition=Established crd/gpucapacityrequests.gpuscale.io --timeout=60s >/dev/null
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
reconciler_start_one "$here/policy.yaml"
[ "$(node_allocatable "$node" nvidia.com/gpu)" = 7 ] || die "allocatable nvidia.com/gpu is not 7"

# The request's Granted condition as "status/reason", and its grantedReplicas.
condition() {
  kc get gpucapacityrequest "$1" \
    -o jsonpath='{.status.conditions[?(@.type=="Granted")].status}/{.status.conditions[?(@.type=="Granted")].reason}'
}
granted() {
  local g
  g=$(kc get gpucapacityrequest "$1" -o jsonpath='{.status.grantedReplicas}')
  echo "${g:-0}"
}
is_granted() { [ "$(condition "$1")" = True/Granted ] && [ "$(granted "$1")" = "$2" ]; }

step "two planners ask for 20 replicas each; the higher priority is granted first"
kc apply -f - >/dev/null <<'YAML'
apiVersion: gpuscale.io/v1alpha1
kind: GPUCapacityRequest
metadata: {name: high, namespace: default, annotations: {gpuscale.io/partition-policy: default}}
spec: {resource: nvidia.com/gpu, replicas: 20, priority: 100}
---
apiVersion: gpuscale.io/v1alpha1
kind: GPUCapacityRequest
metadata: {name: low, namespace: default, annotations: {gpuscale.io/partition-policy: default}}
spec: {resource: nvidia.com/gpu, replicas: 20, priority: 0}
YAML
eventually 120 "high Granted with 20 replicas" is_granted high 20
[ "$(node_allocatable "$node" nvidia.com/gpu)" -ge 20 ] ||
  die "high granted 20 while allocatable is $(node_allocatable "$node" nvidia.com/gpu)"
cfg=$(node_label "$node" nvidia.com/device-plugin.config)
case "$cfg" in gpuscale-"$node"-*) ;; *) die "the devices were not time-sliced: '$cfg'" ;; esac
held_short() { case "$(condition low)" in False/*) true ;; *) false ;; esac; }
eventually 30 "low held short" held_short
echo "high: $(condition high) $(granted high); low: $(condition low) $(granted low)"
[ "$(granted low)" -lt 20 ] || die "low granted 20 beside high"
[ "$(kc get gpucapacityrequest high -o jsonpath='{.status.observedGeneration}')" = \
  "$(kc get gpucapacityrequest high -o jsonpath='{.metadata.generation}')" ] ||
  die "high's status does not observe its generation"
expect_event high Granted
expect_event low Blocked
kc get events --field-selector involvedObject.name=low,reason=Blocked \
  -o jsonpath='{.items[0].involvedObject.kind}' | grep -qx GPUCapacityRequest ||
  die "the Blocked Event is not about the GPUCapacityRequest"

step "a request no policy manages is told so"
kc apply -f - >/dev/null <<'YAML'
apiVersion: gpuscale.io/v1alpha1
kind: GPUCapacityRequest
metadata: {name: stray, namespace: default}
spec: {resource: nvidia.com/gpu, replicas: 2}
YAML
not_managed() { [ "$(condition stray)" = False/NotManaged ]; }
eventually 60 "stray Granted False NotManaged" not_managed
[ -z "$(kc get gpucapacityrequest stray -o jsonpath='{.status.grantedReplicas}')" ] ||
  die "stray, which no policy manages, has a grantedReplicas"
expect_event stray Blocked

step "deleting high gives its capacity back: low is granted its 20"
kc delete gpucapacityrequest high >/dev/null
eventually 90 "low Granted with 20 replicas" is_granted low 20
expect_event low Granted
# A steady state writes nothing: the request's resourceVersion stays over a few passes.
rv=$(kc get gpucapacityrequest low -o jsonpath='{.metadata.resourceVersion}')
sleep 5
[ "$(kc get gpucapacityrequest low -o jsonpath='{.metadata.resourceVersion}')" = "$rv" ] ||
  die "the reconciler rewrote low's status in a steady state"
echo "wall time $((SECONDS - started)) s"
echo "PASS"
