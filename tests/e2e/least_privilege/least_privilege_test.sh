#!/usr/bin/env bash
# The reconciler's least privilege, enforced by the real kube-apiserver (tests/cluster): with the
# ServiceAccount token of gpuscale-reconciler, its RBAC (manifests/reconciler/rbac.yaml) and the
# admission policies (manifests/reconciler/admission-policy.yaml), every kind of write the
# reconciler makes goes through, and writes beside them are refused by the policy that covers them
# (the answer names it: RBAC would have allowed them). One row per write:
#   Nodes          its labels (nvidia.com/mig.config, nvidia.com/device-plugin.config, gpuscale.io/*,
#                  an operand label from paused-for-mig-change back to true), gpuscale.io/
#                  annotations and its NoSchedule taint gpuscale.io/reshape pass; another label or
#                  annotation, pausing an operand, cordoning, another taint, a NoExecute reshape taint,
#                  a finalizer are refused;
#   HPAs           spec.maxReplicas with the gpuscale.io/status annotation passes (also through
#                  autoscaling/v1); minReplicas, metrics, the scale target, the tenant's policy
#                  annotation and labels are refused;
#   ScaledObjects  spec.maxReplicaCount passes (the test grants the RBAC a later version will need);
#                  minReplicaCount and triggers are refused;
#   GPUCapacityRequests  status.grantedReplicas, status.observedGeneration and the Granted
#                  condition through the status subresource pass; another condition is refused (its
#                  spec is not granted by RBAC at all);
#   ConfigMaps     its state ConfigMap and the two GPU Operator ConfigMaps pass, its own keys of the
#                  device-plugin ConfigMap too; another ConfigMap, or the operator's own key, is refused;
#   Leases, Events its Lease and Events it reports (and their count) pass; another Lease, an Event
#                  claiming another source or about a Pod, rewriting an Event's message are refused.
# That the reconciler itself does its work under these permissions is shown by the tests that run it
# with this identity (tests/e2e/reconciler/lib.sh: reconciler_start_one; scenario (a),
# tests/e2e/scenario/scenario_test.sh).
# Exit 77 (skipped) when the cluster binaries are missing. Shell helpers: tests/e2e/lib/common.sh.
set -euo pipefail
# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
e2e_init least-privilege
here=$src/tests/e2e/least_privilege
e2e_require_cluster

step "start the control plane; the reconciler's namespace, ServiceAccount, RBAC and admission policies"
e2e_cluster_up
# shellcheck source=../lib/reconciler_identity.sh
source "$src/tests/e2e/lib/reconciler_identity.sh"
reconciler_identity "$work/reconciler.kubeconfig"
token=$(sed -n 's/^ *user: {token: "\(.*\)"}$/\1/p' "$work/reconciler.kubeconfig")
[ -n "$token" ] || die "no token in the reconciler's kubeconfig"

step "objects others own: a GPU node, a tenant's HPA and ScaledObject, the operator's device-plugin config"
kc apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: gpu-0
  annotations: {kwok.x-k8s.io/node: fake}
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB
    nvidia.com/mig.config: all-3g.20gb
    nvidia.com/mig.config.state: success
    nvidia.com/gpu.deploy.device-plugin: paused-for-mig-change
    nvidia.com/gpu.deploy.dcgm-exporter: "true"
spec:
  taints: [{key: dedicated, value: ml, effect: NoSchedule}]
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-config, namespace: gpu-operator}
data: {default: "version: v1\n"}
---
# What a version that writes ScaledObjects will need; the shipped RBAC does not grant it yet.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-scaledobject-writer}
rules:
- apiGroups: [keda.sh]
  resources: [scaledobjects]
  verbs: [get, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-scaledobject-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-scaledobject-writer}
subjects:
- {kind: ServiceAccount, name: gpuscale-reconciler, namespace: gpuscale}
YAML
e2e_triton_hpa inference team-a "{team: a}" >/dev/null
kc apply -f "$here/scaledobject-crd.yaml" >/dev/null
kc wait --for=condition=Established crd/scaledobjects.keda.sh --timeout=60s >/dev/null
kc apply -f - >/dev/null <<'YAML'
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: triton, namespace: team-a}
spec:
  scaleTargetRef: {name: triton}
  minReplicaCount: 1
  maxReplicaCount: 7
  triggers: [{type: prometheus, metadata: {query: "sum(queue)"}}]
YAML

# As the reconciler: kubectl with its kubeconfig, or the API directly (Events and Leases: its RBAC
# has no `get` on Events, which kubectl patch needs; the reconciler sends merge patches).
as_reconciler() { kc --kubeconfig "$work/reconciler.kubeconfig" "$@"; }
api() { # METHOD PATH [BODY]: the answer's body; fails on an HTTP error
  local type=application/json
  [ "$1" = PATCH ] && type=application/merge-patch+json
  curl -sS --fail-with-body --max-time 10 --cacert "$GPUSCALE_CA_CERT" -H "Authorization: Bearer $token" \
    -X "$1" -H "Content-Type: $type" ${3:+--data "$3"} "$GPUSCALE_APISERVER_URL$2"
}
event() { # NAME KIND SOURCE REPORTING-COMPONENT: an Event as JSON
  printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"%s","namespace":"default"},' "$1"
  printf '"involvedObject":{"kind":"%s","apiVersion":"v1","name":"gpu-0"},"reason":"MigReconfigureStarted",' "$2"
  printf '"message":"plan p1","type":"Normal","source":{"component":"%s"},"reportingComponent":"%s",' "$3" "$4"
  printf '"reportingInstance":"e2e","firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z","count":1}'
}
lease() { printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"%s","namespace":"gpuscale"},"spec":{"holderIdentity":"e2e"}}' "$1"; }

failures=0
allowed() { # WHAT COMMAND...: the write goes through
  local what=$1
  shift
  if "$@" >"$work/out" 2>&1; then
    echo "   allowed  $what"
  else
    echo "FAIL refused: $what: $(tail -n 1 "$work/out")"
    failures=$((failures + 1))
  fi
}
denied() { # POLICY WHAT COMMAND...: refused, and the answer names the policy
  local policy=$1 what=$2
  shift 2
  if "$@" >"$work/out" 2>&1; then
    echo "FAIL allowed: $what"
    failures=$((failures + 1))
  elif grep "ValidatingAdmissionPolicy '$policy'" "$work/out" >/dev/null; then
    echo "   denied   $what ($policy)"
  else
    echo "FAIL $what: refused, but not by $policy: $(tail -n 1 "$work/out")"
    failures=$((failures + 1))
  fi
}
P=gpuscale-reconciler

step "Nodes: the GPU Operator's config labels, gpuscale.io/ keys and the reshape taint"
allowed "taint gpuscale.io/reshape:NoSchedule" as_reconciler taint node gpu-0 gpuscale.io/reshape:NoSchedule
allowed "label nvidia.com/mig.config and annotations gpuscale.io/intent, gpuscale.io/mig-restore" \
  as_reconciler patch node gpu-0 --type=merge -p '{"metadata":{"labels":{"nvidia.com/mig.config":"gpuscale-gpu-0-1a2b_3c4d"},"annotations":{"gpuscale.io/intent":"{\"phase\":\"applied\"}","gpuscale.io/mig-restore":"all-3g.20gb"}}}'
allowed "operand label nvidia.com/gpu.deploy.device-plugin paused-for-mig-change -> true" \
  as_reconciler label node gpu-0 nvidia.com/gpu.deploy.device-plugin=true --overwrite
allowed "untaint gpuscale.io/reshape, outcome annotation, intent removed" \
  as_reconciler patch node gpu-0 --type=merge -p '{"metadata":{"annotations":{"gpuscale.io/intent":null,"gpuscale.io/outcome":"{\"result\":\"success\"}"}},"spec":{"taints":[{"key":"dedicated","value":"ml","effect":"NoSchedule"}]}}'
allowed "label nvidia.com/device-plugin.config" as_reconciler label node gpu-0 nvidia.com/device-plugin.config=gpuscale-gpu-0-1a2b_5e6f
allowed "a gpuscale.io/ label" as_reconciler label node gpu-0 gpuscale.io/managed=true
denied $P-nodes "another label (example.com/team)" as_reconciler label node gpu-0 example.com/team=a
denied $P-nodes "GFD's label nvidia.com/gpu.product" as_reconciler label node gpu-0 nvidia.com/gpu.product=other --overwrite
denied $P-nodes "mig-manager's label nvidia.com/mig.config.state" as_reconciler label node gpu-0 nvidia.com/mig.config.state=pending --overwrite
denied $P-nodes "pausing an operand (nvidia.com/gpu.deploy.dcgm-exporter=false)" \
  as_reconciler label node gpu-0 nvidia.com/gpu.deploy.dcgm-exporter=false --overwrite
denied $P-nodes "another annotation" as_reconciler annotate node gpu-0 example.com/note=x
denied $P-nodes "cordon (spec.unschedulable)" as_reconciler patch node gpu-0 -p '{"spec":{"unschedulable":true}}'
denied $P-nodes "an unrelated taint" as_reconciler taint node gpu-0 evict:NoExecute
denied $P-nodes "removing someone else's taint" as_reconciler taint node gpu-0 dedicated-
denied $P-nodes "gpuscale.io/reshape as NoExecute" as_reconciler taint node gpu-0 gpuscale.io/reshape:NoExecute
denied $P-nodes "a finalizer" as_reconciler patch node gpu-0 --type=json -p '[{"op":"add","path":"/metadata/finalizers","value":["example.com/keep"]}]'

step "HPAs: spec.maxReplicas and gpuscale.io/status"
allowed "spec.maxReplicas with gpuscale.io/status (what the reconciler writes)" \
  as_reconciler -n team-a patch hpa triton --type=merge -p '{"spec":{"maxReplicas":9},"metadata":{"annotations":{"gpuscale.io/status":"{\"ceiling\":14}"}}}'
allowed "spec.maxReplicas through autoscaling/v1" \
  as_reconciler -n team-a patch horizontalpodautoscalers.v1.autoscaling triton --type=merge -p '{"spec":{"maxReplicas":10}}'
denied $P-autoscalers "spec.minReplicas" as_reconciler -n team-a patch hpa triton --type=merge -p '{"spec":{"minReplicas":9}}'
denied $P-autoscalers "the metric target" as_reconciler -n team-a patch hpa triton --type=json \
  -p '[{"op":"replace","path":"/spec/metrics/0/pods/target/averageValue","value":"5"}]'
denied $P-autoscalers "the scale target" as_reconciler -n team-a patch hpa triton --type=merge -p '{"spec":{"scaleTargetRef":{"name":"other"}}}'
denied $P-autoscalers "the tenant's gpuscale.io/partition-policy" \
  as_reconciler -n team-a annotate hpa triton gpuscale.io/partition-policy=other --overwrite
denied $P-autoscalers "a label" as_reconciler -n team-a label hpa triton team=b --overwrite
[ "$(kc -n team-a get hpa triton -o jsonpath='{.spec.minReplicas}/{.spec.maxReplicas}')" = 1/10 ] ||
  die "the HPA is not as the allowed writes left it"

step "ScaledObjects: spec.maxReplicaCount"
allowed "spec.maxReplicaCount" as_reconciler -n team-a patch scaledobject triton --type=merge -p '{"spec":{"maxReplicaCount":9}}'
denied $P-scaledobjects "spec.minReplicaCount" as_reconciler -n team-a patch scaledobject triton --type=merge -p '{"spec":{"minReplicaCount":3}}'
denied $P-scaledobjects "the triggers" as_reconciler -n team-a patch scaledobject triton --type=merge -p '{"spec":{"triggers":[{"type":"cpu"}]}}'

step "GPUCapacityRequests: the status subresource, the Granted condition"
kc apply -f "$src/manifests/crds/gpucapacityrequests.yaml" >/dev/null
kc wait --for=condition=Established crd/gpucapacityrequests.gpuscale.io --timeout=60s >/dev/null
kc apply -f - >/dev/null <<'YAML'
apiVersion: gpuscale.io/v1alpha1
kind: GPUCapacityRequest
metadata: {name: planner, namespace: team-a}
spec: {resource: nvidia.com/mig-1g.5gb, replicas: 2}
YAML
granted='{"type":"Granted","status":"True","reason":"Granted","message":"2 of 2 replicas granted","lastTransitionTime":"2026-01-01T00:00:00Z"}'
# As the reconciler sends it: a merge patch of /status (kubectl patch --subresource would GET
# /status first, which the reconciler neither needs nor is granted).
status=/apis/gpuscale.io/v1alpha1/namespaces/team-a/gpucapacityrequests/planner/status
allowed "status.grantedReplicas, observedGeneration and Granted (what the reconciler writes)" \
  api PATCH $status "{\"status\":{\"grantedReplicas\":2,\"observedGeneration\":1,\"conditions\":[$granted]}}"
denied $P-capacityrequests "another condition" \
  api PATCH $status "{\"status\":{\"conditions\":[$granted,{\"type\":\"Ready\",\"status\":\"True\"}]}}"
[ "$(kc -n team-a get gpucapacityrequest planner -o jsonpath='{.spec.replicas}/{.status.grantedReplicas}')" = 2/2 ] ||
  die "the request is not as the allowed write left it"

step "ConfigMaps: its state and the two GPU Operator ConfigMaps, only its own keys of the device-plugin one"
allowed "create its state ConfigMap" as_reconciler -n gpuscale create configmap gpuscale-reconciler-state --from-literal=team-a.triton='{}'
allowed "patch its state ConfigMap" as_reconciler -n gpuscale patch configmap gpuscale-reconciler-state --type=merge -p '{"data":{"team-a.triton":null}}'
allowed "create the mig-parted ConfigMap" as_reconciler -n gpu-operator create configmap gpuscale-mig-parted-config --from-literal=config.yaml='version: v1'
allowed "its own key of the device-plugin ConfigMap" \
  as_reconciler -n gpu-operator patch configmap device-plugin-config --type=merge -p '{"data":{"gpuscale-gpu-0-1a2b_5e6f":"version: v1\n"}}'
denied $P-scope "another ConfigMap in its namespace" as_reconciler -n gpuscale create configmap other
denied $P-scope "another ConfigMap in gpu-operator" as_reconciler -n gpu-operator create configmap other
denied $P-configmaps "the operator's own key of the device-plugin ConfigMap" \
  as_reconciler -n gpu-operator patch configmap device-plugin-config --type=merge -p '{"data":{"default":"version: v2\n"}}'

step "Leases and Events"
allowed "create its Lease" api POST /apis/coordination.k8s.io/v1/namespaces/gpuscale/leases "$(lease gpuscale-reconciler)"
denied $P-scope "another Lease" api POST /apis/coordination.k8s.io/v1/namespaces/gpuscale/leases "$(lease other)"
allowed "an Event it reports" api POST /api/v1/namespaces/default/events "$(event ours Node gpuscale-reconciler gpuscale.io/reconciler)"
allowed "a repeat of it (count, lastTimestamp)" \
  api PATCH /api/v1/namespaces/default/events/ours '{"count":2,"lastTimestamp":"2026-01-01T00:01:00Z"}'
denied $P-events "rewriting its message" api PATCH /api/v1/namespaces/default/events/ours '{"message":"something else"}'
denied $P-events "an Event claiming the kubelet as source" api POST /api/v1/namespaces/default/events "$(event forged Node kubelet kubelet)"
denied $P-events "an Event about a Pod" api POST /api/v1/namespaces/default/events "$(event pod Pod gpuscale-reconciler gpuscale.io/reconciler)"

[ $failures -eq 0 ] || die "$failures write(s) not as the policies say"
echo "PASS"
