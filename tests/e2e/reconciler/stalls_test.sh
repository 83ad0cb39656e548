#!/usr/bin/env bash
# Stalled GPU Operators on the real control plane: every stall is bounded and undone. scenario.yaml
# with its two idle A100s moved to Triton's pool (held at gpu-a100-0's seven 1g.5gb slices) and
# their mig-managers changed:
#   - gpu-a100-1 has none (no nvidia.com/mig.config.state): it is not MIG-managed; the planner never
#     reshapes it (`explain`: MigNotManaged), it is never tainted, no stall is counted for it;
#   - gpu-a100-2's hangs in `rebooting` (injected hang-rebooting): the reshape the reconciler starts
#     there (MIG the only lever) is undone after --mig-timeout (30 s): previous label back, reshape
#     taint removed, the node backs off (gpuscale.io/backoff-until; `explain`: NodeBackoff), a
#     Warning Event, node_stalls_total{cause="mig_manager_stuck"} in /metrics, Triton still held.
# Restarted with time-slicing allowed, the reconciler takes that lever on gpu-a100-0 and raises
# maxReplicas without reshaping gpu-a100-2 again; the 7 Triton pods that ran were never disturbed.
# A slow mig-manager (gpu-a100-3, 10 s a run) within the timeout is not cut off: its reshape
# succeeds, no stall counted; a silent one (gpu-a100-4, injected ignore: no state change at all,
# `success` from before stays) is bounded too: untainted, backing off, counted as no_capacity. A watch records every taint the idle nodes carry over the whole run.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-stalls

step "start the control plane, gpuscale-sim (mig-manager absent, hanging) and the reconciler"
sed -e '/{reconfiguration: 1, mode: fail}/d' -e '0,/^  failures:$/s//  migManager: {present: false}/' \
  -e 's/{mode: hang}/{mode: hang-rebooting}/' -e 's/pool: \(spare\|stuck\)/pool: serving/' \
  "$here/scenario.yaml" >"$work/scenario.yaml"
# Two more idle A100s as gpu-a100-2, each in a pool of its own: a slow mig-manager and a silent one.
a100_2=$(sed -n '/^- name: gpu-a100-2$/,$p' "$work/scenario.yaml")
sed -e 's/gpu-a100-2/gpu-a100-3/' -e 's/pool: serving/pool: slow/' -e '/mode: hang-rebooting/d' \
  -e 's/^  failures:$/  migManager: {reconfigureSeconds: 10}/' <<<"$a100_2" >>"$work/scenario.yaml"
sed -e 's/gpu-a100-2/gpu-a100-4/' -e 's/pool: serving/pool: silent/' -e 's/hang-rebooting/ignore/' \
  <<<"$a100_2" >>"$work/scenario.yaml"
[ "$(grep -c -e "present: false" -e "mode: hang-rebooting" -e "pool: serving" -e "reconfigureSeconds: 10" \
  -e "pool: slow" -e "pool: silent" -e "mode: ignore" "$work/scenario.yaml")" = 9 ] ||
  die "scenario not made: $(cat "$work/scenario.yaml")"
# MIG reshapes only at first, so that Triton stays held while the stalls play out.
sed 's/levers: \[migReshape, timeSlicing\]/levers: [migReshape]/' "$here/policy.yaml" >"$work/mig-only.yaml"
grep -q "levers: \[migReshape\]$" "$work/mig-only.yaml" || die "policy not made"
e2e_cluster_up --scenario "$work/scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
managed() { [ "$(node_label "$1" nvidia.com/mig.config.state)" = success ]; }
both_ready() { managed gpu-a100-0 && managed gpu-a100-2; }
eventually 60 "gpu-a100-0 and gpu-a100-2 ready" both_ready
[ -z "$(node_label gpu-a100-1 nvidia.com/mig.config.state)" ] || die "gpu-a100-1 has a mig-manager"
for node in gpu-a100-1 gpu-a100-2; do
  e2e_spawn "$work/taints-$node.log" "$bin/kubectl" get node "$node" --watch \
    -o jsonpath='{.spec.taints[*].key}{"\n"}'
done
explains() { # policy pattern...: `explain default/triton` names every pattern
  local out pattern
  out=$("$rec" explain default/triton --kubeconfig "$KUBECONFIG" --policy "$1") || die "explain: $out"
  echo "$out"
  shift
  for pattern in "$@"; do grep -q -- "$pattern" <<<"$out" || die "explain does not say $pattern"; done
}

step "Triton: 9 wanted, 7 slices on gpu-a100-0; the plan reshapes gpu-a100-2, never gpu-a100-1"
kc apply -f "$here/triton.yaml" >/dev/null
running() { kc get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l; }
running_at_least() { [ "$(running)" -ge "$1" ]; }
eventually 60 "7 Triton pods Running" running_at_least 7
uids() { # [kubectl get args...]
  kc get pods -l app=triton "$@" -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort
}
first7=$(uids --field-selector=status.phase=Running)
explains "$work/mig-only.yaml" "node gpu-a100-1 (migReshape): MigNotManaged" \
  "plan: reshape MIG on node gpu-a100-2"
reconciler_start_one "$work/mig-only.yaml" --mig-timeout 30s --failure-backoff 10m

step "the reshape of gpu-a100-2 hangs in rebooting, the node tainted"
state_is() { [ "$(node_label "$1" nvidia.com/mig.config.state)" = "$2" ]; }
tainted() { grep -q "gpuscale.io/" <<<"$(kc get node "$1" -o jsonpath='{.spec.taints[*].key}')"; }
outcome_is() { annotation node "$1" gpuscale.io/outcome | grep -q "\"result\":\"$2\""; }
reshaping() { # node: gpuscale's config on the label, the node tainted
  case "$(node_label "$1" nvidia.com/mig.config)" in gpuscale-"$1"-*) tainted "$1" ;; *) false ;; esac
}
undone() { # node: timed out, untainted, backing off, a Warning Event
  eventually 90 "the run on $1 times out" outcome_is "$1" timeout
  ! tainted "$1" || die "$1 still tainted"
  [ -n "$(annotation node "$1" gpuscale.io/backoff-until)" ] || die "$1 does not back off"
  expect_event "$1" MigReconfigureTimedOut
  kc get events --field-selector "involvedObject.name=$1,reason=MigReconfigureTimedOut" \
    -o jsonpath='{.items[*].type}' | grep -qx Warning || die "MigReconfigureTimedOut is not a Warning"
}
eventually 90 "gpu-a100-2 rebooting" state_is gpu-a100-2 rebooting
reshaping gpu-a100-2 || die "gpu-a100-2 rebooting, but not reshaped by gpuscale and tainted"

step "after --mig-timeout: label restored, taint removed, backing off, a Warning Event, a metric"
undone gpu-a100-2
[ "$(node_label gpu-a100-2 nvidia.com/mig.config)" = all-3g.20gb ] || die "previous label not restored"
metrics=$(rec_status "$REC_STATUS_PORT" /metrics) || die "no /metrics"
grep -q '^gpuscale_reconciler_node_stalls_total{cause="mig_manager_stuck"} 1$' <<<"$metrics" ||
  die "the stall is not counted: $(grep node_stalls_total <<<"$metrics")"
! grep -q 'node_stalls_total{cause="mig_manager_absent"}' <<<"$metrics" ||
  die "a stall on the node without mig-manager: $(grep node_stalls_total <<<"$metrics")"
explains "$work/mig-only.yaml" "node gpu-a100-1 (migReshape): MigNotManaged" \
  "node gpu-a100-2 (migReshape): NodeBackoff: .*rebooting"
[ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" = 9 ] || die "Triton raised by MIG alone"
e2e_stop "$REC_PID"

step "with time-slicing allowed: gpu-a100-0 time-sliced, maxReplicas raised, running pods kept"
reconciler_start_one "$here/policy.yaml" --mig-timeout 30s --failure-backoff 10m --max-nodes-in-flight 3
max_above_9() { [ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt 9 ]; }
eventually 120 "maxReplicas raised" max_above_9
case "$(node_label gpu-a100-0 nvidia.com/device-plugin.config)" in
  gpuscale-gpu-a100-0-*) ;;
  *) die "gpu-a100-0 not time-sliced: $(node_label gpu-a100-0 nvidia.com/device-plugin.config)" ;;
esac
eventually 120 "9 Triton pods Running" running_at_least 9
[ "$(comm -12 <(uids) <(echo "$first7") | wc -l)" = "$(wc -l <<<"$first7")" ] ||
  die "running Triton pods disturbed"

step "gpu-a100-3's slow mig-manager (10 s) succeeds; gpu-a100-4's silent one is undone"
for pool in slow silent; do sed "s/stuck/$pool/g" "$here/stuck.yaml" | kc apply -f - >/dev/null; done
eventually 90 "gpu-a100-3 pending" state_is gpu-a100-3 pending
reshaping gpu-a100-3 || die "gpu-a100-3 pending, but not reshaped by gpuscale and tainted"
eventually 90 "gpu-a100-4 reshaping" reshaping gpu-a100-4
eventually 90 "the slow run succeeds" outcome_is gpu-a100-3 success
! tainted gpu-a100-3 || die "gpu-a100-3 still tainted"
[ -z "$(annotation node gpu-a100-3 gpuscale.io/backoff-until)" ] || die "gpu-a100-3 backs off"
slow_running() { [ "$(kc get pods -l app=slow --field-selector=status.phase=Running -o name | wc -l)" = 2 ]; }
eventually 60 "2 slow pods Running" slow_running
undone gpu-a100-4
metrics=$(rec_status "$REC_STATUS_PORT" /metrics) || die "no /metrics"
# Its state label still says `success` from before, so the reconciler reads the run as done with
# allocatable never showing it: the table's NoCapacity row (label kept, cause no_capacity).
grep -q '^gpuscale_reconciler_node_stalls_total{cause="no_capacity"} 1$' <<<"$metrics" ||
  die "the silent mig-manager is not counted: $(grep node_stalls_total <<<"$metrics")"
[ "$(grep -c '^gpuscale_reconciler_node_stalls_total{.*} [1-9]' <<<"$metrics")" = 1 ] ||
  die "other stalls counted: $(grep node_stalls_total <<<"$metrics")"

step "gpu-a100-1 was never touched: no taint, no label, no Event of the reconciler"
grep -q "gpuscale.io/" "$work/taints-gpu-a100-2.log" || die "the taint watch saw nothing"
! grep -q "gpuscale.io/" "$work/taints-gpu-a100-1.log" || die "gpu-a100-1 was tainted"
[ "$(node_label gpu-a100-1 nvidia.com/mig.config)" = all-3g.20gb ] || die "gpu-a100-1 relabelled"
[ -z "$(event_reasons gpu-a100-1 | grep '^Mig')" ] || die "Events on gpu-a100-1: $(event_reasons gpu-a100-1)"
! grep -q "gpu-a100-1: Mig" "$work/rec.log" || die "the reconciler acted on gpu-a100-1"
[ "$(grep -c "gpu-a100-2: MigReconfigureStarted" "$work/rec.log")" = 1 ] ||
  die "gpu-a100-2 reshaped again while backing off"
echo "PASS"
