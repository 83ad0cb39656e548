#!/usr/bin/env bash
# The on-ramp and the off-ramp on the real control plane, gpuscale-sim as the GPU Operator
# (scenario.yaml: Triton held at 7 1g.5gb slices; a spare node whose first reshape fails).
#   1. --mode=observe, with the base's read-only RBAC: the reconciler plans the time-slicing change
#      and the raise and says so (WouldAct Events, explain, /metrics), but the HPA stays held at 9,
#      no node, HPA or ConfigMap carries anything of gpuscale, and nothing it asked was forbidden;
#      `preflight` as its ServiceAccount fails and lists act mode's missing grants; with the admin's
#      kubeconfig it fails on a ClusterPolicy naming the stock mig-parted ConfigMap and passes once
#      the ClusterPolicy is patched as its hint says. Before the patch, with gpuscale's mig-parted
#      ConfigMap deleted (as before the first MIG write; preflight warns), `configmaps init`
#      creates it with the stock configs and leaves the device plugin's; a second run does nothing.
#   2. The same reconciler in act mode, with the write grants of components/act (`preflight -o json`
#      as its ServiceAccount now passes): time-slicing, maxReplicas raised, a failed reshape of the
#      spare node (outcome and backoff annotations), the state store written.
#   3. The reconciler stops; `gpuscale-reconciler cleanup --restore-stock-configs` leaves no trace:
#      no gpuscale.io/ key or reshape taint on nodes, the device-plugin label gone, Triton's
#      maxReplicas back at 9, no status annotation, no state store; a second run finds nothing.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-onramp

step "start the control plane and gpuscale-sim"
e2e_cluster_up --scenario "$here/scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
ready() { [ "$(node_label gpu-a100-0 nvidia.com/mig.config.state)" = success ]; }
eventually 60 "gpu-a100-0 ready" ready

no_traces || die "traces before the reconciler ran"
max_replicas() { kc get hpa "$1" -o jsonpath='{.spec.maxReplicas}'; }

step "observe mode: it plans and says what it would do, and changes nothing"
reconciler_start_one "$here/policy.yaml" --mode=observe
kc apply -f "$here/triton.yaml" >/dev/null
seven_running() { [ "$(kc get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l)" -ge 7 ]; }
eventually 60 "7 Triton pods Running" seven_running
expect_event triton WouldAct
kc get events --field-selector reason=WouldAct -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' |
  grep -q "would set maxReplicas of HPA default/triton: 9 ->" || die "no WouldAct Event for the raise"
held() { [ "$(max_replicas triton)" = 9 ] && no_traces; }
holds 10 "observe mode changed the cluster" held
why=$("$rec" explain default/triton --kubeconfig "$KUBECONFIG" --config "$here/policy.yaml") ||
  die "explain failed: $why"
grep -q "plan: set maxReplicas of HPA default/triton: 9 ->" <<<"$why" || die "explain says: $why"
metrics=$(rec_status "$REC_STATUS_PORT" /metrics) || die "no /metrics"
grep -q '^gpuscale_reconciler_observe_mode 1' <<<"$metrics" || die "observe mode not in /metrics"
grep -q '^gpuscale_reconciler_would_act_total{kind="maxReplicas"} [1-9]' <<<"$metrics" ||
  die "no would-act count in /metrics"
grep -q '^gpuscale_reconciler_actions_total{' <<<"$metrics" && die "an action was counted"
e2e_stop "$REC_PID"
# It ran with the base's read-only RBAC (Events and its Lease aside): nothing it did was refused.
if grep -iw "forbidden\|403" "$work/rec.log"; then die "observe mode was refused something"; fi
# The reconciler's mig-parted ConfigMap as before its first MIG write: not there yet.
kc -n gpu-operator delete configmap gpuscale-mig-parted-config >/dev/null
# preflight as the reconciler, with observe's grants: act mode's writes are missing.
rc=0
"$rec" preflight --kubeconfig "$work/reconciler.kubeconfig" --state-namespace gpuscale \
  >"$work/preflight-observe.out" 2>&1 || rc=$?
cat "$work/preflight-observe.out"
[ "$rc" = 1 ] || die "preflight with observe's grants exited $rc, not 1"
grep -q "^fail permissions: .*missing: .*patch nodes" "$work/preflight-observe.out" ||
  die "preflight did not list the missing grants"
grep -q "^ok   node gpu-a100-0: .*nvidia.com/mig.config.state=success" "$work/preflight-observe.out" ||
  die "preflight did not find the GPU node"
# The shipped read-only RBAC lets the reconciler watch the DRA kinds the control plane serves.
grep -q "^ok   api resource.k8s.io/v1: served; resourceslices, deviceclasses" \
  "$work/preflight-observe.out" || die "preflight did not find the DRA kinds readable"
grep -q "^warn mig-config: no ConfigMap gpu-operator/gpuscale-mig-parted-config" \
  "$work/preflight-observe.out" || die "preflight did not warn of the missing mig-parted ConfigMap"
# preflight with the admin's kubeconfig reads the ClusterPolicy: it still names the stock mig-parted
# ConfigMap (fail, with the patch), then, patched as the hint says, the reconciler's.
kc apply -f "$here/clusterpolicy.yaml" >/dev/null
kc wait --for=condition=Established crd/clusterpolicies.nvidia.com --timeout=60s >/dev/null
kc apply -f "$here/clusterpolicy-object.yaml" >/dev/null
# configmaps init, before the ClusterPolicy is repointed: gpuscale's mig-parted ConfigMap holds the
# stock configs of the one the ClusterPolicy names; the device plugin's exists and stays; a second
# run has nothing to do.
"$rec" configmaps init --kubeconfig "$KUBECONFIG" >"$work/cm-init.out" 2>&1 ||
  { cat "$work/cm-init.out"; die "configmaps init failed"; }
cat "$work/cm-init.out"
grep -q "^created gpu-operator/gpuscale-mig-parted-config: .* from default-mig-parted-config" \
  "$work/cm-init.out" || die "configmaps init did not create the mig-parted ConfigMap"
grep -q "^exists  gpu-operator/device-plugin-config" "$work/cm-init.out" ||
  die "configmaps init did not leave the device-plugin ConfigMap"
cm_configs() { kc -n gpu-operator get configmap "$1" -o jsonpath='{.data.config\.yaml}' | grep -c '^  [a-z]'; }
[ "$(cm_configs gpuscale-mig-parted-config)" = "$(cm_configs default-mig-parted-config)" ] ||
  die "the created ConfigMap does not hold the stock configs"
kc -n gpu-operator get configmap gpuscale-mig-parted-config -o jsonpath='{.data.config\.yaml}' |
  grep -q '^  all-balanced:' || die "no all-balanced in the created ConfigMap"
"$rec" configmaps init --kubeconfig "$KUBECONFIG" >"$work/cm-init.out" 2>&1 ||
  { cat "$work/cm-init.out"; die "configmaps init failed the second time"; }
grep -q "^nothing to do" "$work/cm-init.out" || die "a second configmaps init: $(cat "$work/cm-init.out")"
rc=0
"$rec" preflight --kubeconfig "$KUBECONFIG" --state-namespace gpuscale >"$work/preflight-admin.out" 2>&1 || rc=$?
cat "$work/preflight-admin.out"
[ "$rc" = 1 ] || die "preflight with a ClusterPolicy naming the stock ConfigMap exited $rc, not 1"
hint=$(sed -n 's/^ *hint: \(kubectl patch clusterpolicy cluster-policy .*\)$/\1/p' "$work/preflight-admin.out")
[ -n "$hint" ] || die "preflight gave no patch for the ClusterPolicy"
eval "kc ${hint#kubectl }" >/dev/null
"$rec" preflight --kubeconfig "$KUBECONFIG" --state-namespace gpuscale --policy "$here/policy.yaml" \
  >"$work/preflight-admin.out" 2>&1 ||
  { cat "$work/preflight-admin.out"; die "preflight failed after the ClusterPolicy was patched"; }
[ "$(grep -c "^ok   cluster-policy cluster-policy: spec\.\(migManager\|devicePlugin\)\.config\.name is" \
  "$work/preflight-admin.out")" = 2 ] ||
  die "preflight did not find both ClusterPolicy fields right: $(cat "$work/preflight-admin.out")"
grep -q "^ok   policy default: 3 of 3 GPU node(s) in scope" "$work/preflight-admin.out" ||
  die "preflight did not count the policy's nodes: $(cat "$work/preflight-admin.out")"
grep -q "^ok   mig-config: ConfigMap gpu-operator/gpuscale-mig-parted-config" "$work/preflight-admin.out" ||
  die "preflight still misses the mig-parted ConfigMap: $(cat "$work/preflight-admin.out")"

step "act mode: time-slicing, maxReplicas raised, a failed reshape backing off"
reconciler_start_one "$here/policy.yaml" --mode=act --failure-backoff 10m
# preflight as the reconciler, with act's grants: nothing fails.
"$rec" preflight --kubeconfig "$work/reconciler.kubeconfig" --state-namespace gpuscale -o json \
  >"$work/preflight-act.json" 2>&1 || { cat "$work/preflight-act.json"; die "preflight with act's grants failed"; }
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["passed"], r
assert any(c["name"] == "permissions" and c["result"] == "ok" for c in r["checks"]), r' \
  "$work/preflight-act.json" || die "preflight's JSON: $(cat "$work/preflight-act.json")"
raised() { [ "$(max_replicas triton)" -gt 9 ]; }
eventually 120 "maxReplicas raised" raised
kc apply -f "$here/spare.yaml" >/dev/null
backing_off() { [ -n "$(annotation node gpu-a100-1 gpuscale.io/backoff-until)" ]; }
eventually 120 "the failed reshape of gpu-a100-1 backs off" backing_off
kc get configmap -n gpuscale gpuscale-reconciler-state >/dev/null || die "no state store"
[ -n "$(traces)" ] || die "acting left no trace to clean"
e2e_stop "$REC_PID"

step "cleanup: no trace of gpuscale on nodes and HPAs"
"$rec" cleanup --kubeconfig "$KUBECONFIG" --state-namespace gpuscale --restore-stock-configs \
  --wait-timeout 60s >"$work/cleanup.out" 2>&1 || { cat "$work/cleanup.out"; die "cleanup failed"; }
cat "$work/cleanup.out"
grep -q "default/triton: .* -> 9" "$work/cleanup.out" || die "Triton's maxReplicas not restored"
no_traces || die "cleanup left traces"
[ "$(max_replicas triton)" = 9 ] || die "Triton maxReplicas is $(max_replicas triton)"
[ "$(max_replicas spare)" = 2 ] || die "spare maxReplicas changed"
[ "$(annotation hpa triton gpuscale.io/partition-policy)" = default ] || die "the owner's annotation went"
[ -z "$(node_label gpu-a100-0 nvidia.com/device-plugin.config)" ] || die "device-plugin label kept"
"$rec" cleanup --kubeconfig "$KUBECONFIG" --state-namespace gpuscale >"$work/cleanup2.out" 2>&1 ||
  { cat "$work/cleanup2.out"; die "second cleanup failed"; }
grep -q "nothing to clean" "$work/cleanup2.out" || { cat "$work/cleanup2.out"; die "second run changed things"; }
echo "PASS"
