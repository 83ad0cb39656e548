#!/usr/bin/env bash
# The reconciler next to the real KEDA operator and metrics server (tests/cluster/build.sh extra),
# KEDA alone behind the external metrics API. keda_scenario.yaml: one A100 at all-1g.5gb under the
# MIG single strategy (seven MIG devices as nvidia.com/gpu) and gpuscale-sim playing Triton under
# more load than any partitioning serves; a real Prometheus scrapes gpuscale-sim. The ScaledObject
# triton (keda_triton.yaml) has a Prometheus trigger on Triton's average queue time and holds the
# ceiling, maxReplicaCount 7; KEDA's operator makes the HPA keda-hpa-triton from it and rewrites its
# maxReplicas from spec.maxReplicaCount on every reconcile. Checks:
#   1. KEDA's HPA scales on the queue time up to its ceiling, 7, and is limited there
#      (ScalingLimited TooManyReplicas): the metric reaches it through KEDA;
#   2. the reconciler (--mode=act) time-slices the MIG devices, waits for the allocatable, and
#      raises the ScaledObject's spec.maxReplicaCount; KEDA's HPA shows the new maximum and the
#      replicas reach it;
#   3. the HPA's maxReplicas, watched from before the reconciler started, went 7, the new maximum,
#      and never down (KEDA never reverted it, nothing flapped);
#   4. the reconciler never wrote the HPA's spec (no gpuscale field manager owns an HPA spec field;
#      it does own the ScaledObject's spec.maxReplicaCount), and the Event MaxReplicasRaised and the
#      status annotation name the ScaledObject's field. The ScaledObject is created with no
#      annotation (kubectl create), so KEDA sets its HPA's annotations to none on each reconcile:
#      the status lives on the ScaledObject, KEDA copies it to the HPA, and both keep it;
#   5. give-back: the demand falls (the trigger's threshold raised so that one replica is enough);
#      once the HPA scaled down, the reconciler lowers spec.maxReplicaCount to 7 and takes the
#      time-slicing back (allocatable 7); the whole history of maxReplicas reads 7, the new
#      maximum, 7.
# Exit 77 (skipped) when the cluster binaries, KEDA's (tests/cluster/bin-extra/keda, or
# $GPUSCALE_CLUSTER_EXTRA_BIN/keda), gpuscale-sim, gpuscale-reconciler or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
# shellcheck source=../lib/keda_stack.sh
source "$(dirname "$0")/../lib/keda_stack.sh"
reconciler_test_init reconciler-keda /usr/bin/prometheus /usr/bin/openssl
keda_bin=${GPUSCALE_CLUSTER_EXTRA_BIN:-$cluster/bin-extra}/keda
e2e_require "$keda_bin/keda" "$keda_bin/keda-adapter"
e2e_on_exit 'keda_stack_stop'
e2e_on_exit "'$src/tests/support/prometheus_run.sh' stop '$work/prom' >/dev/null 2>&1"
e2e_show_on_failure "$work/keda-operator.log" "$work/keda-metrics-apiserver.log" \
  "$work/prom/prometheus.log" "$work/maxreplicas.log"
node=gpu-a100-0

step "start the control plane, gpuscale-sim (Triton's series) and Prometheus"
e2e_cluster_up --scenario "$here/keda_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
prom=$("$src/tests/support/prometheus_run.sh" start "$work/prom" --scrape "${SIM_URL#http://}" \
  --interval 1s)

step "KEDA: CRDs and RBAC from its module, its operator and metrics server, its APIService"
keda_stack_init "$work" "$keda_bin"
keda_stack_install
keda_stack_certificate
keda_stack_start
keda_stack_register

step "Triton scaled by the ScaledObject triton on its queue time, ceiling 7 (7 MIG devices)"
sed "s#PROMETHEUS_URL#$prom#" "$here/keda_triton.yaml" | kc create -f - >/dev/null
hpa_max() { kc get hpa keda-hpa-triton -o jsonpath='{.spec.maxReplicas}' 2>/dev/null; }
so_max() { kc get scaledobject triton -o jsonpath='{.spec.maxReplicaCount}'; }
running() { e2e_running default app=triton; }
replicas() { kc get deployment triton -o jsonpath='{.spec.replicas}'; }
hpa_max_is() { [ "$(hpa_max)" = "$1" ]; }
eventually 60 "KEDA made the HPA keda-hpa-triton (maxReplicas 7)" hpa_max_is 7
owner=$(kc get hpa keda-hpa-triton \
  -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].controller}')
[ "$owner" = ScaledObject/true ] || die "keda-hpa-triton's controller is '$owner'"
# Every maxReplicas the HPA shows from now on to the end: one line per update of the HPA, the first
# its state now. A raise written to the HPA and undone by KEDA would show up here as a value that
# goes down.
e2e_spawn "$work/maxreplicas.log" "$bin/kubectl" get hpa keda-hpa-triton --watch \
  -o jsonpath='{.spec.maxReplicas}{"\n"}'
watch_pid=$SPAWNED_PID
seven() { [ "$(running)" -eq 7 ]; }
eventually 60 "7 Triton pods Running" seven
limited() {
  [ "$(kc get hpa keda-hpa-triton \
    -o jsonpath='{.status.conditions[?(@.type=="ScalingLimited")].reason}')" = TooManyReplicas ]
}
eventually 120 "KEDA's HPA limited by maxReplicas 7 on the queue time" limited
echo "queue time (a quantity of µs): $(kc get hpa keda-hpa-triton \
  -o jsonpath='{.status.currentMetrics[0].external.current.value}')"

step "the reconciler time-slices the MIG devices and raises the ScaledObject's maxReplicaCount"
# giveback_policy.yaml: policy.yaml with a 5 s scale-down cooldown.
reconciler_start_one "$here/giveback_policy.yaml" --mode=act
raised() { [ "$(so_max)" -gt 7 ]; }
eventually 120 "spec.maxReplicaCount raised" raised
new=$(so_max)
allocatable=$(node_allocatable "$node" nvidia.com/gpu)
[ "$allocatable" -ge "$new" ] || die "maxReplicaCount $new raised before allocatable ($allocatable)"
[ "$(node_label "$node" nvidia.com/gpu.product)" = NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED ] ||
  die "GFD product is $(node_label "$node" nvidia.com/gpu.product)"
echo "ScaledObject triton: maxReplicaCount 7 -> $new (allocatable nvidia.com/gpu $allocatable)"
eventually 60 "KEDA's HPA shows maxReplicas $new" hpa_max_is "$new"
all_running() { [ "$(replicas)" = "$new" ] && [ "$(running)" -eq "$new" ]; }
eventually 180 "$new Triton pods Running" all_running
steady() { hpa_max_is "$new" && [ "$(so_max)" = "$new" ]; }
holds 20 "maxReplicas moved away from $new" steady

step "the Event and the status name the ScaledObject's field"
expect_event keda-hpa-triton MaxReplicasRaised
kc get events --field-selector involvedObject.name=keda-hpa-triton,reason=MaxReplicasRaised \
  -o jsonpath='{.items[0].message}' >"$work/raised.txt"
cat "$work/raised.txt"
echo
grep -q "ScaledObject triton spec.maxReplicaCount 7 -> $new" "$work/raised.txt" ||
  die "the Event does not name the ScaledObject's field"
status=$(annotation scaledobject triton gpuscale.io/status)
grep -q 'ScaledObject triton spec.maxReplicaCount' <<<"$status" ||
  die "the ScaledObject's status does not name it: $status"
status_kept() { # the status stays on the ScaledObject and, copied by KEDA, on its HPA
  [ -n "$(annotation scaledobject triton gpuscale.io/status)" ] &&
    [ -n "$(annotation hpa keda-hpa-triton gpuscale.io/status)" ]
}
eventually 30 "KEDA copied the status to its HPA" status_kept
holds 10 "the status annotation left the ScaledObject or its HPA" status_kept

step "history: maxReplicas went 7, $new and never down; the reconciler never wrote the HPA's spec"
history_is() { # values...: the successive distinct values the watch saw are VALUES
  local seen
  seen=$(uniq "$work/maxreplicas.log" | tr '\n' ' ')
  echo "maxReplicas history: $seen($(wc -l <"$work/maxreplicas.log") updates)"
  [ "$seen" = "$* " ]
}
history_is 7 "$new" || die "maxReplicas flapped"
# Field managers are the writers' User-Agent program names: gpuscale's must own no field of the
# HPA's spec, and does own the ScaledObject's spec.maxReplicaCount (so the name matched).
spec_managers() { # kind name: the managers that own a field under spec, one a line
  kc get "$1" "$2" --show-managed-fields -o json | python3 -c '
import json, sys
for f in json.load(sys.stdin)["metadata"].get("managedFields", []):
    if "f:spec" in f.get("fieldsV1", {}):
        print(f["manager"], sorted(f["fieldsV1"]["f:spec"]))'
}
spec_managers hpa keda-hpa-triton | tee "$work/hpa-managers.txt"
! grep -q gpuscale "$work/hpa-managers.txt" || die "the reconciler wrote the HPA's spec"
spec_managers scaledobject triton | tee "$work/so-managers.txt"
grep -q "^gpuscale-reconciler .*f:maxReplicaCount" "$work/so-managers.txt" ||
  die "no gpuscale-reconciler field manager on the ScaledObject's spec.maxReplicaCount"

step "give-back: one replica is enough; maxReplicaCount back to 7, the time-slicing taken back"
kc patch scaledobject triton --type json >/dev/null \
  -p '[{"op": "replace", "path": "/spec/triggers/0/metadata/threshold", "value": "1e15"}]'
one() { [ "$(replicas)" = 1 ]; }
eventually 120 "the HPA scaled Triton down to 1" one
so_max_is() { [ "$(so_max)" = "$1" ]; }
eventually 120 "spec.maxReplicaCount lowered to 7" so_max_is 7
eventually 60 "KEDA's HPA shows maxReplicas 7" hpa_max_is 7
untimesliced() { [ "$(node_allocatable "$node" nvidia.com/gpu)" = 7 ]; }
eventually 120 "allocatable nvidia.com/gpu back to 7" untimesliced
expect_event keda-hpa-triton MaxReplicasLowered
holds 10 "maxReplicas moved away from 7" hpa_max_is 7
e2e_stop "$watch_pid" || true
history_is 7 "$new" 7 || die "maxReplicas flapped in the give-back"
spec_managers hpa keda-hpa-triton >"$work/hpa-managers.txt"
! grep -q gpuscale "$work/hpa-managers.txt" || die "the reconciler wrote the HPA's spec"
echo "PASS"
