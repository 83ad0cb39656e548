#!/usr/bin/env bash
# gpuscale-reconciler end to end on the real control plane (tests/cluster) with gpuscale-sim as the
# GPU Operator (scenario.yaml). Two reconciler replicas run with leader election.
#   1. Triton asks for 9 replicas (HPA min = max = 9) but the A100 has 7 1g.5gb slices: 7 Running,
#      2 Pending "Insufficient nvidia.com/mig-1g.5gb". The reconciler raises time-slicing on the
#      busy node through the device-plugin ConfigMap + label, waits for allocatable 14, and only
#      then raises maxReplicas; all 9 pods run and the first 7 were never disturbed.
#   2. A second workload pinned to the idle node asks for 1g.5gb slices the node does not have:
#      the reconciler reshapes it through the mig-parted ConfigMap + nvidia.com/mig.config; the
#      injected mig-manager failure is detected, the previous config restored, the node backs off.
#   3. A third node's mig-manager never answers. The leader is killed while that reshape is in
#      flight; the other replica takes over the Lease, resumes from the intent annotations without
#      flipping the label again, times out and restores the previous config; the killed replica is
#      restarted and follows.
# Every step is checked with kubectl; every action must have an Event.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${GPUSCALE_BINARY_DIR:-$src/build}
here=$src/tests/e2e/reconciler
cluster=$src/tests/cluster
bin=${GPUSCALE_CLUSTER_BIN:-$cluster/bin}
sim=${GPUSCALE_SIM:-$build/bin/gpuscale-sim}
rec=$build/bin/gpuscale-reconciler
for b in "$bin"/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kubectl,kwok} "$sim" "$rec"; do
  if [ ! -x "$b" ]; then
    echo "skip: $b not built"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-reconciler-test.XXXXXX")
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$cluster/down.sh" "$work/cluster" || { [ $rc -ne 0 ] || rc=1; }
  if [ $rc -eq 0 ]; then
    rm -rf "$work"
  else
    echo "FAILED (rc=$rc); logs kept in $work" >&2
    for f in "$work"/rec-*.log "$work"/sim.log; do
      [ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 30 "$f" >&2; }
    done
  fi
  exit $rc
}
trap cleanup EXIT

step() { echo "== $*"; }
die() {
  echo "FAIL: $*" >&2
  exit 1
}
eventually() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || die "timed out: $what"
    sleep 0.5
  done
}

step "start the control plane, gpuscale-sim and two reconciler replicas"
"$cluster/up.sh" "$work/cluster" --scenario "$here/scenario.yaml"
# shellcheck disable=SC1091
source "$work/cluster/env"
kc() { "$bin/kubectl" "$@"; }
"$sim" run --scenario "$GPUSCALE_SCENARIO" --kubeconfig "$KUBECONFIG" --resync 1 \
  --listen 127.0.0.1:0 --port-file "$work/sim.port" >"$work/sim.log" 2>&1 &
pids+=($!)
eventually 30 "gpuscale-sim port file" test -s "$work/sim.port"
eventually 60 "gpuscale-sim /healthz" curl -sf "http://127.0.0.1:$(cat "$work/sim.port")/healthz" -o /dev/null

start_reconciler() {  # NAME PORT
  "$rec" run --kubeconfig "$KUBECONFIG" --config "$here/policy.yaml" \
    --leader-elect-identity "$1" --leader-elect-namespace default \
    --lease-duration 4s --renew-deadline 3s --retry-period 1s --resync-period 2s \
    --mig-timeout 20s --allocatable-timeout 60s --failure-backoff 10m --max-nodes-in-flight 2 \
    --health-bind-address "127.0.0.1:$2" >>"$work/rec-$1.log" 2>&1 &
  pids+=($!)
  eval "pid_$1=$!"
}
port_a=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
port_b=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
start_reconciler a "$port_a"
eventually 30 "replica a ready" curl -sf "http://127.0.0.1:$port_a/readyz" -o /dev/null
eventually 30 "replica a leads" sh -c "curl -sf http://127.0.0.1:$port_a/leader | grep -q true"
start_reconciler b "$port_b"
eventually 30 "replica b ready" curl -sf "http://127.0.0.1:$port_b/readyz" -o /dev/null
sleep 2
[ "$(curl -sf "http://127.0.0.1:$port_b/leader")" = false ] || die "two leaders"

label() { kc get node "$1" -o jsonpath="{.metadata.labels.${2//./\\.}}"; }
annotation() { kc get "$1" "$2" -o jsonpath="{.metadata.annotations.${3//./\\.}}"; }
alloc() { kc get node "$1" -o jsonpath="{.status.allocatable.${2//./\\.}}"; }
running() { kc get pods -l "app=$1" --field-selector=status.phase=Running -o name | wc -l; }
events_for() { kc get events -A --field-selector "involvedObject.name=$1" -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}'; }
has_event() { events_for "$1" | grep -q "^$2\$"; }
# expect_event OBJECT REASON: the Event shows up (it is written right after the change it reports).
expect_event() { eventually 15 "$2 event on $1" has_event "$1" "$2"; }

step "Triton: 9 wanted, 7 slices"
kc apply -f "$here/triton.yaml" >/dev/null
eventually 60 "7 Triton pods Running" sh -c "[ \$($bin/kubectl get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l) -ge 7 ]"
first7=$(kc get pods -l app=triton --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)

step "the reconciler time-slices the slices, waits for allocatable, then raises maxReplicas"
eventually 120 "maxReplicas raised" sh -c "[ \$($bin/kubectl get hpa triton -o jsonpath='{.spec.maxReplicas}') -gt 9 ]"
[ "$(alloc gpu-a100-0 nvidia.com/mig-1g.5gb)" -ge 14 ] || die "maxReplicas raised before allocatable"
cfg=$(label gpu-a100-0 nvidia.com/device-plugin.config)
case "$cfg" in gpuscale-gpu-a100-0-*) ;; *) die "device-plugin.config is '$cfg'" ;; esac
kc get configmap -n gpu-operator device-plugin-config -o jsonpath="{.data.$cfg}" | grep -q 'replicas: 2' ||
  die "device-plugin config $cfg not in the ConfigMap"
eventually 120 "9 Triton pods Running" sh -c "[ \$($bin/kubectl get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l) -eq 9 ]"
still=$(kc get pods -l app=triton -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort | comm -12 - <(echo "$first7") | wc -l)
n_first=$(echo "$first7" | wc -l)
[ "$still" -eq "$n_first" ] || die "running pods disturbed: $still of $n_first left"
expect_event triton PartitionsRequested
expect_event triton MaxReplicasRaised
expect_event gpu-a100-0 TimeSlicingSucceeded
annotation hpa triton gpuscale.io/status | grep -q '"lastAction":"maxReplicas 9 ->' || die "no status annotation"
[ -z "$(annotation hpa triton gpuscale.io/intent)" ] || die "HPA intent left behind"
flips=$(cat "$work"/rec-*.log | grep -c "TimeSlicingStarted" || true)
[ "$flips" -le 1 ] || die "time-slicing started $flips times"

step "a reshape of the idle node fails in mig-manager: reverted, operands unpaused, backing off"
kc apply -f "$here/spare.yaml" >/dev/null
eventually 120 "the failed run is reverted" sh -c "$bin/kubectl get node gpu-a100-1 -o jsonpath='{.metadata.annotations.gpuscale\.io/outcome}' | grep -q '\"result\":\"failed\"'"
eventually 30 "previous config restored" sh -c "[ \"\$($bin/kubectl get node gpu-a100-1 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config}')\" = all-3g.20gb ]"
eventually 30 "state success on the old config" sh -c "[ \"\$($bin/kubectl get node gpu-a100-1 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config\.state}')\" = success ]"
[ -n "$(annotation node gpu-a100-1 gpuscale.io/backoff-until)" ] || die "no backoff"
expect_event gpu-a100-1 MigReconfigureFailed
[ "$(alloc gpu-a100-1 nvidia.com/mig-3g.20gb)" = 2 ] || die "old geometry not advertised again"
[ "$(kc get hpa spare -o jsonpath='{.spec.maxReplicas}')" = 2 ] || die "spare maxReplicas changed"

step "mig-manager never answers; the leader is killed mid-action; the other replica resumes"
kc apply -f "$here/stuck.yaml" >/dev/null
eventually 60 "reshape of gpu-a100-2 pending" sh -c "[ \"\$($bin/kubectl get node gpu-a100-2 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config\.state}')\" = pending ]"
case "$(label gpu-a100-2 nvidia.com/mig.config)" in gpuscale-gpu-a100-2-*) ;; *) die "no reshape started" ;; esac
annotation node gpu-a100-2 gpuscale.io/intent | grep -q '"phase":"applied"' || die "no intent on the node"
kill -KILL "$pid_a"
eventually 30 "replica b leads" sh -c "curl -sf http://127.0.0.1:$port_b/leader | grep -q true"
start_reconciler a "$port_a"
eventually 30 "replica a back" curl -sf "http://127.0.0.1:$port_a/readyz" -o /dev/null
eventually 90 "the hung run times out" sh -c "$bin/kubectl get node gpu-a100-2 -o jsonpath='{.metadata.annotations.gpuscale\.io/outcome}' | grep -q '\"result\":\"timeout\"'"
[ "$(label gpu-a100-2 nvidia.com/mig.config)" = all-3g.20gb ] || die "previous config not restored"
expect_event gpu-a100-2 MigReconfigureTimedOut
started=$(cat "$work"/rec-*.log | grep -c "gpu-a100-2: MigReconfigureStarted" || true)
[ "$started" -eq 1 ] || die "reshape of gpu-a100-2 started $started times"
[ "$(curl -sf "http://127.0.0.1:$port_a/leader")" = false ] || die "restarted replica leads too"
[ "$(kc get hpa stuck -o jsonpath='{.spec.maxReplicas}')" = 2 ] || die "stuck maxReplicas changed"
[ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt 9 ] || die "maxReplicas lost"
[ "$(label gpu-a100-0 nvidia.com/device-plugin.config)" = "$cfg" ] || die "config changed by the new leader"
[ "$(cat "$work"/rec-*.log | grep -c TimeSlicingStarted)" -eq 1 ] || die "time-slicing applied twice"
curl -sf "http://127.0.0.1:$port_b/metrics" | grep -q gpuscale_reconciler_reconciles_total || die "no metrics"
echo "PASS"
