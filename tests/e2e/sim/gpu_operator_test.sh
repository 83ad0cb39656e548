#!/usr/bin/env bash
# gpuscale-sim against the real control plane (tests/cluster): brings a cluster up in a temporary
# directory, runs `gpuscale-sim run` with scenario.yaml and checks with kubectl:
#   the GPU nodes carry GFD/operator labels and GPU capacity/allocatable; a Deployment asking for
#   nvidia.com/mig-1g.5gb schedules up to the allocatable count and the rest stay Pending with the
#   scheduler's "Insufficient nvidia.com/mig-1g.5gb"; a mig.config change on a busy GPU fails and
#   keeps allocatable; on the idle GPU it walks pending (allocatable 0) -> success and changes
#   allocatable; an injected failure fails; a time-slicing change raises allocatable without
#   touching the running pod; /healthz and /metrics answer.
# Exit 77 (skipped) when the cluster binaries or gpuscale-sim are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
E2E_POLL=0.5
e2e_init sim-test
e2e_require_cluster
e2e_require "$sim"
e2e_show_on_failure "$work/sim.log" "$work/cluster/logs/kube-scheduler.log" \
  "$work/cluster/logs/kwok.log"

step "start the control plane and gpuscale-sim"
e2e_cluster_up --scenario "$src/tests/e2e/sim/scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO"

# expect_eq DESCRIPTION ACTUAL EXPECTED
expect_eq() { [ "$2" = "$3" ] || die "$1: got '$2', want '$3'"; }
is_label() { [ "$(node_label "$1" "$2")" = "$3" ]; }
is_alloc() { [ "$(node_allocatable "$1" "$2")" = "$3" ]; }

step "kubectl sees the GPU nodes with GFD labels and allocatable"
for n in gpu-a100-0 gpu-a100-1 gpu-t4-0; do
  kc wait --for=condition=Ready "node/$n" --timeout=120s >/dev/null
done
kc get nodes -L nvidia.com/gpu.product,nvidia.com/mig.config,nvidia.com/mig.config.state
expect_eq "a100 product" "$(node_label gpu-a100-0 nvidia.com/gpu.product)" NVIDIA-A100-SXM4-40GB
expect_eq "a100 strategy" "$(node_label gpu-a100-0 nvidia.com/mig.strategy)" mixed
expect_eq "a100 mig.capable" "$(node_label gpu-a100-0 nvidia.com/mig.capable)" true
expect_eq "a100 mig.config" "$(node_label gpu-a100-0 nvidia.com/mig.config)" all-1g.5gb
expect_eq "a100 state" "$(node_label gpu-a100-0 nvidia.com/mig.config.state)" success
expect_eq "a100 1g count" "$(node_label gpu-a100-0 nvidia.com/mig-1g.5gb.count)" 7
expect_eq "a100 gpu.count" "$(node_label gpu-a100-0 nvidia.com/gpu.count)" 1
expect_eq "a100 gpu.memory" "$(node_label gpu-a100-0 nvidia.com/gpu.memory)" 40960
expect_eq "a100 allocatable" "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" 7
expect_eq "t4 allocatable" "$(node_allocatable gpu-t4-0 nvidia.com/gpu)" 1
expect_eq "t4 replicas" "$(node_label gpu-t4-0 nvidia.com/gpu.replicas)" 1
expect_eq "t4 sharing" "$(node_label gpu-t4-0 nvidia.com/gpu.sharing-strategy)" none
expect_eq "t4 mig.capable" "$(node_label gpu-t4-0 nvidia.com/mig.capable)" false
kc -n gpu-operator get configmap default-mig-parted-config device-plugin-config >/dev/null ||
  die "the GPU Operator ConfigMaps are missing"
kc -n gpu-operator get configmap default-mig-parted-config -o jsonpath='{.data.config\.yaml}' |
  grep -q '^  all-balanced:' || die "default-mig-parted-config has no all-balanced"

step "9 pods asking for nvidia.com/mig-1g.5gb on gpu-a100-0: 7 Running, 2 Pending (Insufficient)"
kc create namespace e2e >/dev/null
eventually 60 "default service account in e2e" kc -n e2e get serviceaccount default -o name
deployment() { # NAME NODE RESOURCE REPLICAS
  kc -n e2e apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $4
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: {kubernetes.io/hostname: $2}
      containers:
      - name: server
        image: triton
        resources: {limits: {$3: 1}}
YAML
}
deployment slices gpu-a100-0 nvidia.com/mig-1g.5gb 9
count_phase() { kc -n e2e get pods -l "app=$1" --field-selector="status.phase=$2" -o name | wc -l; }
# phase_count_is APP PHASE N: re-evaluated on every poll of eventually.
phase_count_is() { [ "$(count_phase "$1" "$2")" = "$3" ]; }
seven_two() { [ "$(count_phase slices Running)" = 7 ] && [ "$(count_phase slices Pending)" = 2 ]; }
eventually 120 "7 Running and 2 Pending" seven_two
pending=pod/$(kc -n e2e get pods -l app=slices --field-selector=status.phase=Pending \
  -o jsonpath='{.items[0].metadata.name}')
unschedulable() {
  kc -n e2e get "$pending" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' |
    grep -q "Insufficient nvidia.com/mig-1g.5gb"
}
eventually 60 "scheduler message on $pending" unschedulable
kc -n e2e get "$pending" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}{"\n"}'

step "mig.config change on the busy GPU: pending -> failed, allocatable kept"
kc label node gpu-a100-0 nvidia.com/mig.config=all-3g.20gb --overwrite >/dev/null
eventually 30 "state failed" is_label gpu-a100-0 nvidia.com/mig.config.state failed
expect_eq "allocatable after failure" "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" 7
expect_eq "pods untouched" "$(count_phase slices Running)" 7
grep -q "in use by another client" "$work/sim.log" || die "the failure is not logged"

step "on the idle GPU: pending (allocatable 0) -> success, allocatable of all-balanced"
kc -n e2e delete deployment slices --wait=false >/dev/null
no_pods() { [ -z "$(kc -n e2e get pods -l app=slices -o name)" ]; }
eventually 120 "slices pods gone" no_pods
kc label node gpu-a100-0 nvidia.com/mig.config=all-balanced --overwrite >/dev/null
saw_pending=no
states=""
deadline=$((SECONDS + 60))
while :; do
  state=$(node_label gpu-a100-0 nvidia.com/mig.config.state)
  case " $states " in *" $state "*) ;; *) states="$states $state" ;; esac
  if [ "$state" = pending ] && [ "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" = 0 ]; then
    saw_pending=yes
  fi
  [ "$state" = success ] && break
  [ $SECONDS -lt $deadline ] || die "no success; states seen:$states"
  sleep 0.2
done
echo "states seen:$states"
expect_eq "pending with allocatable 0 was observed" "$saw_pending" yes
expect_eq "1g.5gb after all-balanced" "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" 2
expect_eq "2g.10gb after all-balanced" "$(node_allocatable gpu-a100-0 nvidia.com/mig-2g.10gb)" 1
expect_eq "3g.20gb after all-balanced" "$(node_allocatable gpu-a100-0 nvidia.com/mig-3g.20gb)" 1
expect_eq "GFD count label" "$(node_label gpu-a100-0 nvidia.com/mig-3g.20gb.count)" 1
expect_eq "deploy label restored" "$(node_label gpu-a100-0 nvidia.com/gpu.deploy.device-plugin)" true

step "injected failure on gpu-a100-1: pending -> failed"
kc label node gpu-a100-1 nvidia.com/mig.config=all-3g.20gb --overwrite >/dev/null
eventually 30 "state failed" is_label gpu-a100-1 nvidia.com/mig.config.state failed
expect_eq "allocatable after injected failure" "$(node_allocatable gpu-a100-1 nvidia.com/mig-1g.5gb)" 7
grep -q "injected failure" "$work/sim.log" || die "the injected failure is not logged"

step "time-slicing on the T4 raises allocatable without touching the running pod"
deployment ts gpu-t4-0 nvidia.com/gpu 1
eventually 60 "ts pod Running" phase_count_is ts Running 1
uid=$(kc -n e2e get pods -l app=ts -o jsonpath='{.items[0].metadata.uid}')
kc label node gpu-t4-0 nvidia.com/device-plugin.config=ts-4 --overwrite >/dev/null
eventually 30 "nvidia.com/gpu = 4" is_alloc gpu-t4-0 nvidia.com/gpu 4
expect_eq "t4 replicas" "$(node_label gpu-t4-0 nvidia.com/gpu.replicas)" 4
expect_eq "t4 product" "$(node_label gpu-t4-0 nvidia.com/gpu.product)" Tesla-T4-SHARED
expect_eq "t4 sharing" "$(node_label gpu-t4-0 nvidia.com/gpu.sharing-strategy)" time-slicing
expect_eq "same pod" "$(kc -n e2e get pods -l app=ts -o jsonpath='{.items[0].metadata.uid}')" "$uid"
expect_eq "still Running" "$(kc -n e2e get pods -l app=ts -o jsonpath='{.items[0].status.phase}')" Running
kc -n e2e scale deployment ts --replicas=4 >/dev/null
eventually 60 "4 time-sliced pods Running" phase_count_is ts Running 4

step "/metrics"
metrics=$(curl -sf "$SIM_URL/metrics")
grep -q 'gpuscale_sim_mig_reconfigurations_total{node="gpu-a100-0",result="success"} 1' <<<"$metrics" ||
  die "no success counted for gpu-a100-0"
grep -q 'gpuscale_sim_mig_reconfigurations_total{node="gpu-a100-1",result="failed"} 1' <<<"$metrics" ||
  die "no failure counted for gpu-a100-1"
grep -q 'gpuscale_sim_node_allocatable{node="gpu-t4-0",resource="nvidia.com/gpu"} 4' <<<"$metrics" ||
  die "allocatable gauge of gpu-t4-0"

step "SIGTERM stops gpuscale-sim"
e2e_stop "$SIM_PID" || die "gpuscale-sim exited with $?"
echo "PASS"
