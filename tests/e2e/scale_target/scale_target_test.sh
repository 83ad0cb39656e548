#!/usr/bin/env bash
# An HPA on a workload scaled through its /scale subresource whose replica is a group of pods: a
# CRD of LeaderWorkerSet's shape (crd.yaml) whose groups gpuscale-sim keeps (--pod-groups), on the
# single-strategy A100 of reconciler/single_scenario.yaml (seven MIG devices as nvidia.com/gpu).
# The LeaderWorkerSet llm wants 4 groups of 2 pods of one device each (workload.yaml; HPA min = max
# = 4): 7 pods Running, one Pending "Insufficient nvidia.com/gpu", the ceiling 3 groups. Checks:
#   1. the reconciler (--mode=act, manifests/reconciler's RBAC: the LeaderWorkerSet grants come
#      through the aggregated ClusterRole) finds the kind through discovery, watches it, reads its
#      Scale, and time-slices the devices; it raises maxReplicas in whole groups: to at most
#      allocatable / 2;
#   2. the HPA then asks for maxReplicas groups (minReplicas raised to it), the Scale carries them to
#      the LeaderWorkerSet, and every group's pods all run: no group is left half-placed;
#   3. an HPA on a kind the cluster does not serve is skipped with a reason (a Warning Event
#      ObjectSkipped, the log) while llm is planned.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../reconciler/lib.sh
source "$(dirname "$0")/../reconciler/lib.sh"
reconciler_test_init scale-target
mine=$src/tests/e2e/scale_target
node=gpu-a100-0

step "start the control plane, the CRD, gpuscale-sim (keeping the groups) and the reconciler"
e2e_cluster_up --scenario "$here/single_scenario.yaml"
kc apply -f "$mine/crd.yaml" >/dev/null
kc wait --for=condition=Established crd/leaderworkersets.leaderworkerset.x-k8s.io \
  --timeout=60s >/dev/null
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1 \
  --pod-groups leaderworkerset.x-k8s.io/v1/leaderworkersets
[ "$(node_allocatable "$node" nvidia.com/gpu)" = 7 ] || die "allocatable nvidia.com/gpu is not 7"

step "llm: 4 groups of 2 pods wanted, 7 devices"
running() { kc get pods -l app=llm --field-selector=status.phase=Running -o name | wc -l; }
pending() { kc get pods -l app=llm --field-selector=status.phase=Pending -o name | wc -l; }
kc apply -f "$mine/workload.yaml" >/dev/null
seven_and_one() { [ "$(running)" -eq 7 ] && [ "$(pending)" -eq 1 ]; }
eventually 90 "7 llm pods Running, 1 Pending" seven_and_one
kc get --raw /apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/llm/scale |
  python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["spec"]["replicas"] == 4 and s["status"]["selector"].startswith(
    "leaderworkerset.sigs.k8s.io/name=llm"), s' || die "the Scale of llm"
# An HPA on a kind nobody serves: skipped, the rest planned.
kc apply -f - >/dev/null <<'YAML'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: ghost, namespace: default, annotations: {gpuscale.io/partition-policy: default}}
spec:
  scaleTargetRef: {apiVersion: example.com/v1, kind: InferencePool, name: ghost}
  minReplicas: 1
  maxReplicas: 2
  metrics:
  - type: Pods
    pods: {metric: {name: avg_time_queue_us}, target: {type: AverageValue, averageValue: "50"}}
YAML
reconciler_start_one "$here/policy.yaml"

step "the reconciler time-slices the devices, then raises maxReplicas in whole groups"
hpa_max() { kc get hpa llm -o jsonpath='{.spec.maxReplicas}'; }
raised() { [ "$(hpa_max)" -gt 4 ]; }
eventually 120 "maxReplicas raised" raised
max=$(hpa_max)
allocatable=$(node_allocatable "$node" nvidia.com/gpu)
[ $((max * 2)) -le "$allocatable" ] ||
  die "maxReplicas $max groups of 2 is more than allocatable $allocatable holds"
echo "maxReplicas 4 -> $max groups (allocatable nvidia.com/gpu $allocatable)"
expect_event llm MaxReplicasRaised
expect_event ghost ObjectSkipped
grep -q 'skipping HorizontalPodAutoscaler default/ghost: its scale target kind InferencePool' \
  "$work/rec.log" || die "the reconciler did not say why it skips the HPA ghost"

step "the HPA asks for $max groups; every group's pods all run"
kc patch hpa llm --type merge -p "{\"spec\":{\"minReplicas\":$max}}" >/dev/null
all_running() {
  [ "$(kc get leaderworkerset llm -o jsonpath='{.spec.replicas}')" = "$max" ] &&
    [ "$(running)" -eq $((max * 2)) ]
}
eventually 120 "$max groups, $((max * 2)) llm pods Running" all_running
kc get pods -l app=llm -o json | python3 -c '
import collections, json, sys
groups = collections.defaultdict(list)
for p in json.load(sys.stdin)["items"]:
    labels = p["metadata"]["labels"]
    groups[labels["leaderworkerset.sigs.k8s.io/group-index"]].append(p["status"].get("phase"))
bad = {g: ps for g, ps in groups.items() if len(ps) != 2 or set(ps) != {"Running"}}
assert not bad, f"groups not whole and Running: {bad}"
print(f"{len(groups)} groups, each with its 2 pods Running")' || die "a group is half-placed"
[ "$(hpa_max)" = "$max" ] || die "maxReplicas moved to $(hpa_max)"
echo "PASS"
