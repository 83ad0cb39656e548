#!/usr/bin/env bash
# The reconciler next to the real KEDA operator (tests/cluster/build.sh extra): the story of
# single_test.sh with the ceiling held by a ScaledObject (keda_triton.yaml). KEDA's operator makes
# the HPA keda-hpa-triton from the ScaledObject (maxReplicas 9) and rewrites its maxReplicas from
# spec.maxReplicaCount on every reconcile. Checks:
#   1. the reconciler time-slices the node and raises the ScaledObject's spec.maxReplicaCount
#      (never the HPA's maxReplicas: the HPA's managedFields give the reconciler no spec field);
#   2. KEDA's HPA shows the new maximum, and its maxReplicas history (a watch from before the raise
#      until 20 s after it) only ever rises: KEDA never reverts it;
#   3. the two Pending pods run; the Events and the HPA's status annotation name the ScaledObject.
# Exit 77 (skipped) when the cluster binaries, KEDA's (tests/cluster/bin-extra/keda, or
# $GPUSCALE_CLUSTER_EXTRA_BIN/keda), gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
# shellcheck source=../lib/keda_stack.sh
source "$(dirname "$0")/../lib/keda_stack.sh"
reconciler_test_init reconciler-keda
keda_bin=${GPUSCALE_CLUSTER_EXTRA_BIN:-$cluster/bin-extra}/keda
e2e_require "$keda_bin/keda"
e2e_on_exit 'keda_stack_stop'
e2e_show_on_failure "$work/keda-operator.log"
node=gpu-a100-0

step "start the control plane, gpuscale-sim and KEDA's operator"
e2e_cluster_up --scenario "$here/single_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
keda_stack_init "$work" "$keda_bin"
keda_stack_install
keda_stack_certificate
KEDA_GRPC_PORT=$(_ks_free_port)
keda_stack_operator_without_rotation

step "Triton scaled by a ScaledObject at its ceiling: 9 wanted, 7 MIG devices"
running() { kc get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l; }
kc apply -f "$here/keda_triton.yaml" >/dev/null
hpa_max() { kc get hpa keda-hpa-triton -o jsonpath='{.spec.maxReplicas}' 2>/dev/null; }
eventually 60 "KEDA made the HPA keda-hpa-triton (maxReplicas 9)" test "$(hpa_max)" = 9
owner=$(kc get hpa keda-hpa-triton -o jsonpath='{.metadata.ownerReferences[0].kind}')
[ "$owner" = ScaledObject ] || die "keda-hpa-triton is owned by '$owner'"
at_least_7() { [ "$(running)" -ge 7 ]; }
eventually 60 "7 Triton pods Running" at_least_7
# Every maxReplicas the HPA shows from now on, one line per change.
e2e_spawn "$work/maxreplicas.log" "$bin/kubectl" get hpa keda-hpa-triton --watch \
  -o jsonpath='{.spec.maxReplicas}{"\n"}'

step "the reconciler time-slices and raises the ScaledObject's maxReplicaCount"
reconciler_start_one "$here/policy.yaml"
so_max() { kc get scaledobject triton -o jsonpath='{.spec.maxReplicaCount}'; }
raised() { [ "$(so_max)" -gt 9 ]; }
eventually 90 "spec.maxReplicaCount raised" raised
[ "$(node_allocatable "$node" nvidia.com/gpu)" -ge 14 ] || die "raised before allocatable"
new=$(so_max)
eventually 30 "KEDA's HPA shows maxReplicas $new" test "$(hpa_max)" = "$new"
nine() { [ "$(running)" -eq 9 ]; }
eventually 60 "9 Triton pods Running" nine
steady() { test "$(hpa_max)" = "$new" && test "$(so_max)" = "$new"; }
holds 20 "maxReplicas moved away from $new" steady
expect_event keda-hpa-triton MaxReplicasRaised
kc get events --field-selector involvedObject.name=keda-hpa-triton,reason=MaxReplicasRaised \
  -o jsonpath='{.items[0].message}' | tee "$work/raised.txt"
echo
grep -q 'ScaledObject triton spec.maxReplicaCount 9 -> ' "$work/raised.txt" ||
  die "the Event does not name the ScaledObject"
kc get hpa keda-hpa-triton -o jsonpath='{.metadata.annotations.gpuscale\.io/status}' |
  grep -q 'ScaledObject triton spec.maxReplicaCount' || die "the status does not name it"

step "history: maxReplicas only rose; the reconciler never wrote the HPA's spec"
echo "maxReplicas history: $(tr '\n' ' ' <"$work/maxreplicas.log")"
python3 - "$work/maxreplicas.log" "$new" <<'PY' || die "maxReplicas flapped"
import sys
seen = [int(x) for x in open(sys.argv[1]).read().split()]
assert seen and seen[0] == 9 and seen[-1] == int(sys.argv[2]), seen
assert all(a <= b for a, b in zip(seen, seen[1:])), seen
PY
# The reconciler's field manager (its User-Agent's program name) never owns spec fields of the HPA.
kc get hpa keda-hpa-triton --show-managed-fields -o json | python3 -c '
import json, sys
for f in json.load(sys.stdin)["metadata"].get("managedFields", []):
    if "gpuscale" in f.get("manager", "") and "f:spec" in f.get("fieldsV1", {}):
        sys.exit("the reconciler wrote the HPA spec: %s" % f["manager"])' ||
  die "the reconciler wrote the HPA's spec"
echo "PASS"
