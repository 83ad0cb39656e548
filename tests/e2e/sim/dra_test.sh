#!/usr/bin/env bash
# gpuscale-sim as NVIDIA's GPU DRA driver on the real control plane (tests/cluster), with the real
# kube-scheduler allocating the claims (dra_scenario.yaml):
#   the DeviceClasses gpu.nvidia.com and mig.nvidia.com exist; the static-MIG node's pool is one
#   ResourceSlice with its four MIG devices (names, profile, productName, uuid, memory) and no
#   nvidia.com/* allocatable; the DynamicMIG node's pool is a counters slice and a devices slice;
#   pods whose ResourceClaimTemplate asks mig.nvidia.com for a 1g.5gb are scheduled onto the static
#   node, their claims allocated to its 1g.5gb devices, prepared by the emulated kubelet plugin and
#   Running, and the third waits (two such devices) until one is deleted; on the DynamicMIG node a
#   3g.20gb placement is allocated, after which a whole GPU cannot be (its counters are consumed).
# The dcgm-exporter series name the pods of prepared claims (as dcgm-exporter with its DRA option
# does). Then gpuscale-reconciler (when built) reads them live: `explain` names each node's model from its
# ResourceSlices, `preflight` finds resource.k8s.io/v1 served and readable.
# Exit 77 (skipped) when the cluster binaries or gpuscale-sim are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
E2E_POLL=0.5
e2e_init sim-dra
e2e_require_cluster
e2e_require "$sim"
e2e_show_on_failure "$work/sim.log" "$work/cluster/logs/kube-scheduler.log" \
  "$work/cluster/logs/kube-controller-manager.log" "$work/cluster/logs/kwok.log"

step "start the control plane and gpuscale-sim with two DRA nodes"
e2e_cluster_up --scenario "$src/tests/e2e/sim/dra_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO"

expect_eq() { [ "$2" = "$3" ] || die "$1: got '$2', want '$3'"; }
# jv EXPR: evaluates the Python expression EXPR over the JSON document `d` read from stdin; strings
# print as they are, anything else as compact JSON.
jv() {
  python3 -c 'import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1])
print(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))' "$1"
}
slices_of() { # NODE: the node's ResourceSlices of the driver
  kc get resourceslices --field-selector "spec.nodeName=$1,spec.driver=gpu.nvidia.com" -o json
}
slice_count_is() { [ "$(slices_of "$1" | jv 'len(d["items"])')" = "$2" ]; }

step "DeviceClasses and ResourceSlices"
for n in gpu-dra-static gpu-dra-dynamic; do
  kc wait --for=condition=Ready "node/$n" --timeout=120s >/dev/null
done
kc get deviceclass gpu.nvidia.com mig.nvidia.com
expect_eq "mig.nvidia.com selector" \
  "$(kc get deviceclass mig.nvidia.com -o jsonpath='{.spec.selectors[0].cel.expression}')" \
  "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
eventually 60 "the static node's slice" slice_count_is gpu-dra-static 1
static=$(slices_of gpu-dra-static)
devices=$(jv '[x["name"] for x in d["items"][0]["spec"]["devices"]]' <<<"$static")
expect_eq "static devices" "$devices" \
  '["gpu-0-mig-1g5gb-19-0","gpu-0-mig-1g5gb-19-1","gpu-0-mig-2g10gb-14-2","gpu-0-mig-3g20gb-9-4"]'
dev='[x for x in d["items"][0]["spec"]["devices"] if x["name"] == "gpu-0-mig-1g5gb-19-0"][0]'
expect_eq "profile" "$(jv "$dev[\"attributes\"][\"profile\"][\"string\"]" <<<"$static")" 1g.5gb
expect_eq "productName" "$(jv "$dev[\"attributes\"][\"productName\"][\"string\"]" <<<"$static")" \
  "NVIDIA A100-SXM4-40GB"
expect_eq "memory" "$(jv "$dev[\"capacity\"][\"memory\"][\"value\"]" <<<"$static")" 4864Mi
jv "$dev[\"attributes\"][\"uuid\"][\"string\"]" <<<"$static" | grep -Eq '^MIG-[0-9a-f]{8}-' ||
  die "the MIG device has no uuid"
expect_eq "pool" "$(jv '(d["items"][0]["spec"]["pool"]["name"] + " " +
  str(d["items"][0]["spec"]["pool"]["resourceSliceCount"]))' <<<"$static")" "gpu-dra-static 1"
expect_eq "owner" "$(jv 'd["items"][0]["metadata"]["ownerReferences"][0]["kind"]' <<<"$static")" Node
expect_eq "no device-plugin resources" "$(kc get node gpu-dra-static -o json |
  jv 'len([k for k in d["status"]["allocatable"] if k.startswith("nvidia.com/")])')" 0
eventually 60 "the dynamic node's two slices" slice_count_is gpu-dra-dynamic 2
dynamic=$(slices_of gpu-dra-dynamic)
expect_eq "counter sets" "$(jv '[c["name"] for i in d["items"]
  for c in i["spec"].get("sharedCounters", [])]' <<<"$dynamic")" '["gpu-0-counter-set"]'
expect_eq "dynamic devices" "$(jv 'sum(len(i["spec"].get("devices", [])) for i in d["items"])' \
  <<<"$dynamic")" 26

step "three pods with a 1g.5gb claim each on the static node: two Run, one waits"
kc create namespace e2e >/dev/null
eventually 60 "default service account in e2e" kc -n e2e get serviceaccount default -o name
# shellcheck source=../lib/dra_claims.sh
source "$src/tests/e2e/lib/dra_claims.sh"
template() { dra_claim_template e2e "$@"; } # NAME DEVICECLASS [CEL]
template mig-1g mig.nvidia.com "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"
template mig-3g mig.nvidia.com "device.attributes['gpu.nvidia.com'].profile == '3g.20gb'"
template whole-gpu gpu.nvidia.com
pod() { # NAME NODE TEMPLATE
  kc -n e2e apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  containers:
  - name: server
    image: triton
    resources: {claims: [{name: gpu}]}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: $3}
YAML
}
phase() { kc -n e2e get pod "$1" -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }
for p in small-0 small-1 small-2; do pod "$p" gpu-dra-static mig-1g; done
claim_of() { kc -n e2e get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
device_of() { # POD: pool/device of its claim's allocation
  kc -n e2e get resourceclaim "$(claim_of "$1")" \
    -o jsonpath='{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}'
}
running() { [ "$(kc -n e2e get pods --field-selector=status.phase=Running -o name | wc -l)" = "$1" ]; }
eventually 120 "two pods Running" running 2
holds 5 "still two Running" running 2
waiting=""
for p in small-0 small-1 small-2; do
  if phase_is "$p" Running; then
    case $(device_of "$p") in
      gpu-dra-static/gpu-0-mig-1g5gb-19-0 | gpu-dra-static/gpu-0-mig-1g5gb-19-1) ;;
      *) die "$p: allocated $(device_of "$p")" ;;
    esac
    expect_eq "$p prepared" "$(kc -n e2e get pod "$p" \
      -o jsonpath='{.metadata.annotations.gpuscale\.io/sim-dra-prepared}')" true
  else
    waiting=$p
  fi
done
[ -n "$waiting" ] || die "no pod waits"
expect_eq "$waiting phase" "$(phase "$waiting")" Pending
kc -n e2e get pod "$waiting" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' |
  grep -q Unschedulable || die "$waiting is not unschedulable"
[ "$(device_of "$waiting")" = / ] || die "$waiting got a device: $(device_of "$waiting")"
kc -n e2e get pods -o wide

step "a Running pod deleted: its claim goes, the waiting pod gets the freed 1g.5gb"
for p in small-0 small-1; do
  if phase_is "$p" Running; then
    freed=$(device_of "$p")
    kc -n e2e delete pod "$p" --wait=false >/dev/null
    break
  fi
done
eventually 120 "$waiting Running" phase_is "$waiting" Running
expect_eq "$waiting device" "$(device_of "$waiting")" "$freed"

step "DynamicMIG: a 3g.20gb placement is carved, then the whole GPU cannot be allocated"
pod big gpu-dra-dynamic mig-3g
eventually 120 "big Running" phase_is big Running
case $(device_of big) in
  gpu-dra-dynamic/gpu-0-mig-3g20gb-9-0 | gpu-dra-dynamic/gpu-0-mig-3g20gb-9-4) ;;
  *) die "big: allocated $(device_of big)" ;;
esac
pod whole gpu-dra-dynamic whole-gpu
unschedulable() {
  kc -n e2e get pod whole -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' |
    grep -q Unschedulable
}
eventually 60 "whole is unschedulable" unschedulable
holds 5 "whole stays Pending" phase_is whole Pending
kc -n e2e delete pod big --wait=false >/dev/null
eventually 120 "whole Running once the 3g.20gb is released" phase_is whole Running
expect_eq "whole device" "$(device_of whole)" gpu-dra-dynamic/gpu-0

step "gpuscale-reconciler reads the DRA objects live: explain and preflight"
rec=$build/bin/gpuscale-reconciler
if [ -x "$rec" ]; then
  printf 'policies:\n- name: default\n  hpaNamespaces: [e2e]\n' >"$work/policy.yaml"
  "$rec" explain --kubeconfig "$KUBECONFIG" --policy "$work/policy.yaml" >"$work/explain.out" 2>&1 ||
    { cat "$work/explain.out"; die "explain failed"; }
  cat "$work/explain.out"
  grep -q "^  gpu-dra-static: DRA static, pool gpu-dra-static generation" "$work/explain.out" ||
    die "explain did not read gpu-dra-static's ResourceSlices"
  grep -q "^  gpu-dra-dynamic: DRA partitionable" "$work/explain.out" ||
    die "explain did not read gpu-dra-dynamic's ResourceSlices"
  "$rec" preflight --kubeconfig "$KUBECONFIG" >"$work/preflight.out" 2>&1 || true
  grep -q "^ok   api resource.k8s.io/v1: served" "$work/preflight.out" ||
    { cat "$work/preflight.out"; die "preflight did not find resource.k8s.io/v1 readable"; }
fi

step "the DCGM series and the load model place the pods of claims on their prepared devices"
dcgm_names() { # POD NAMESPACE
  curl -sf "$SIM_URL/metrics" | grep -Eq "^DCGM_FI_PROF_GR_ENGINE_ACTIVE\{[^}]*namespace=\"$2\",pod=\"$1\""
}
eventually 60 "a DCGM series names $waiting" dcgm_names "$waiting" e2e
eventually 60 "a DCGM series names whole" dcgm_names whole e2e

step "gpuscale-sim counts the prepared pods"
curl -sf "$SIM_URL/metrics" | grep -E '^gpuscale_sim_dra_prepared_pods_total [45]' >/dev/null ||
  die "prepared pods not counted: $(curl -sf "$SIM_URL/metrics" | grep dra_)"
echo "PASS"
