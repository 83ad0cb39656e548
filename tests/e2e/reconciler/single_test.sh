#!/usr/bin/env bash
# The story under the MIG single strategy (single_scenario.yaml): an A100 at all-1g.5gb advertises
# its seven MIG devices as nvidia.com/gpu. Triton asks for 9 pods of nvidia.com/gpu: 1 (HPA min =
# max = 9): 7 Running, 2 Pending "Insufficient nvidia.com/gpu". all-1g.5gb already has the most
# instances, so the reconciler time-slices nvidia.com/gpu (device-plugin config with
# flags.migStrategy single), waits for allocatable 14, then raises maxReplicas; GFD renames the
# product ...-MIG-1g.5gb-SHARED; all 9 run and the first 7 keep their UIDs.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-single
node=gpu-a100-0

step "start the control plane, gpuscale-sim and the reconciler"
e2e_cluster_up --scenario "$here/single_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
reconciler_start_one "$here/policy.yaml"
[ "$(node_allocatable "$node" nvidia.com/gpu)" = 7 ] || die "allocatable nvidia.com/gpu is not 7"
[ "$(node_label "$node" nvidia.com/gpu.product)" = NVIDIA-A100-SXM4-40GB-MIG-1g.5gb ] ||
  die "product is $(node_label "$node" nvidia.com/gpu.product)"

step "Triton: 9 wanted, 7 MIG devices"
running() { kc get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l; }
at_least_7() { [ "$(running)" -ge 7 ]; }
kc apply -f "$here/single_triton.yaml" >/dev/null
eventually 60 "7 Triton pods Running" at_least_7
first7=$(kc get pods -l app=triton --field-selector=status.phase=Running \
  -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)

step "the reconciler time-slices the MIG devices, waits for allocatable, then raises maxReplicas"
raised() { [ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt 9 ]; }
eventually 90 "maxReplicas raised" raised
[ "$(node_allocatable "$node" nvidia.com/gpu)" -ge 14 ] || die "maxReplicas raised before allocatable"
cfg=$(node_label "$node" nvidia.com/device-plugin.config)
case "$cfg" in gpuscale-"$node"-*) ;; *) die "device-plugin.config is '$cfg'" ;; esac
kc get configmap -n gpu-operator device-plugin-config -o jsonpath="{.data.$cfg}" |
  python3 -c '
import sys, yaml
c = yaml.safe_load(sys.stdin)
assert c["flags"]["migStrategy"] == "single", c
r = c["sharing"]["timeSlicing"]["resources"]
assert [x["name"] for x in r] == ["nvidia.com/gpu"], r' || die "device-plugin config $cfg is not single-strategy time-slicing of nvidia.com/gpu"
[ "$(node_label "$node" nvidia.com/gpu.product)" = NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED ] ||
  die "GFD product is $(node_label "$node" nvidia.com/gpu.product)"
[ "$(node_label "$node" nvidia.com/mig.config)" = all-1g.5gb ] || die "MIG geometry changed"
nine() { [ "$(running)" -eq 9 ]; }
eventually 60 "9 Triton pods Running" nine
still=$(kc get pods -l app=triton -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' |
  sort | comm -12 - <(echo "$first7") | wc -l)
[ "$still" -eq "$(echo "$first7" | wc -l)" ] || die "running pods disturbed"
expect_event triton MaxReplicasRaised
expect_event "$node" TimeSlicingSucceeded
echo "PASS"
