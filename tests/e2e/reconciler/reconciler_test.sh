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
# Every step is checked with kubectl; every action must have an Event. Timings are for a loaded
# 2-core CI machine: leases long enough that a slow renewal never costs the leader its lease (a
# leader that cannot renew exits), a MIG timeout that leaves room to observe the stuck run before
# it ends, and waits that re-evaluate their condition with generous limits.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-test
e2e_show_on_failure "$work/rec-*.log"

step "start the control plane, gpuscale-sim and two reconciler replicas"
e2e_cluster_up --scenario "$here/scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1

start_reconciler() {  # NAME PROBE_PORT STATUS_PORT
  e2e_spawn "$work/rec-$1.log" "$rec" run --kubeconfig "$KUBECONFIG" --policy "$here/policy.yaml" \
    --leader-elect-identity "$1" --leader-elect-namespace default \
    --lease-duration 15s --renew-deadline 10s --retry-period 1s --resync-period 2s \
    --mig-timeout 45s --allocatable-timeout 60s --failure-backoff 10m --max-nodes-in-flight 2 \
    --health-bind-address "127.0.0.1:$2" --secure-status-bind-address "127.0.0.1:$3"
  eval "pid_$1=$SPAWNED_PID"
}
port_a=$(free_port)
port_b=$(free_port)
status_a=$(free_port)
status_b=$(free_port)
start_reconciler a "$port_a" "$status_a"
leads() { [ "$(rec_status "$1" /leader)" = true ]; }
follows() { [ "$(rec_status "$1" /leader)" = false ]; }
eventually 60 "replica a ready" curl -sf "http://127.0.0.1:$port_a/readyz" -o /dev/null
eventually 60 "replica a leads" leads "$status_a"
start_reconciler b "$port_b" "$status_b"
eventually 60 "replica b ready" curl -sf "http://127.0.0.1:$port_b/readyz" -o /dev/null
holds 3 "two leaders" follows "$status_b"

running() { kc get pods -l "app=$1" --field-selector=status.phase=Running -o name | wc -l; }

step "Triton: 9 wanted, 7 slices"
kc apply -f "$here/triton.yaml" >/dev/null
eventually 60 "7 Triton pods Running" sh -c "[ \$($bin/kubectl get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l) -ge 7 ]"
first7=$(kc get pods -l app=triton --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)

step "the reconciler time-slices the slices, waits for allocatable, then raises maxReplicas"
eventually 120 "maxReplicas raised" sh -c "[ \$($bin/kubectl get hpa triton -o jsonpath='{.spec.maxReplicas}') -gt 9 ]"
[ "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" -ge 14 ] || die "maxReplicas raised before allocatable"
cfg=$(node_label gpu-a100-0 nvidia.com/device-plugin.config)
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
# The state the reconciler relies on is in its own ConfigMap (namespace default: the Lease's), bound
# to the HPA's uid; nothing of it is on the HPA, where a tenant could edit it.
uid=$(kc get hpa triton -o jsonpath='{.metadata.uid}')
state=$(kc get configmap gpuscale-reconciler-state -o jsonpath='{.data.default\.triton}')
echo "$state" | grep -q "\"uid\":\"$uid\"" || die "no state recorded for the HPA: '$state'"
echo "$state" | grep -q '"originalMaxReplicas":9' || die "original maxReplicas not recorded: '$state'"
echo "$state" | grep -q '"intent"' && die "intent left behind in the state store: '$state'"
[ -z "$(annotation hpa triton gpuscale.io/original-max-replicas)$(annotation hpa triton gpuscale.io/last-change)" ] ||
  die "reconciler state written on the HPA"
flips=$(cat "$work"/rec-*.log | grep -c "TimeSlicingStarted" || true)
[ "$flips" -le 1 ] || die "time-slicing started $flips times"

step "a reshape of the idle node fails in mig-manager: reverted, operands unpaused, backing off"
kc apply -f "$here/spare.yaml" >/dev/null
eventually 120 "the failed run is reverted" sh -c "$bin/kubectl get node gpu-a100-1 -o jsonpath='{.metadata.annotations.gpuscale\.io/outcome}' | grep -q '\"result\":\"failed\"'"
eventually 60 "previous config restored" sh -c "[ \"\$($bin/kubectl get node gpu-a100-1 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config}')\" = all-3g.20gb ]"
eventually 60 "state success on the old config" sh -c "[ \"\$($bin/kubectl get node gpu-a100-1 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config\.state}')\" = success ]"
[ -n "$(annotation node gpu-a100-1 gpuscale.io/backoff-until)" ] || die "no backoff"
expect_event gpu-a100-1 MigReconfigureFailed
[ "$(node_allocatable gpu-a100-1 nvidia.com/mig-3g.20gb)" = 2 ] || die "old geometry not advertised again"
[ "$(kc get hpa spare -o jsonpath='{.spec.maxReplicas}')" = 2 ] || die "spare maxReplicas changed"
# Why spare is not raised, from the live state: its only node backs off.
why=$("$rec" explain default/spare --kubeconfig "$KUBECONFIG" --policy "$here/policy.yaml") ||
  die "explain failed: $why"
grep -q "node gpu-a100-1 (migReshape): NodeBackoff" <<<"$why" || die "explain says: $why"

step "mig-manager never answers; the leader is killed mid-action; the other replica resumes"
kc apply -f "$here/stuck.yaml" >/dev/null
eventually 120 "reshape of gpu-a100-2 pending" sh -c "[ \"\$($bin/kubectl get node gpu-a100-2 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config\.state}')\" = pending ]"
case "$(node_label gpu-a100-2 nvidia.com/mig.config)" in gpuscale-gpu-a100-2-*) ;; *) die "no reshape started" ;; esac
annotation node gpu-a100-2 gpuscale.io/intent | grep -q '"phase":"applied"' || die "no intent on the node"
e2e_stop "$pid_a" KILL || true
# The killed leader's Lease runs out (15 s) before replica b takes over.
eventually 90 "replica b leads" leads "$status_b"
start_reconciler a "$port_a" "$status_a"
eventually 60 "replica a back" curl -sf "http://127.0.0.1:$port_a/readyz" -o /dev/null
eventually 150 "the hung run times out" sh -c "$bin/kubectl get node gpu-a100-2 -o jsonpath='{.metadata.annotations.gpuscale\.io/outcome}' | grep -q '\"result\":\"timeout\"'"
[ "$(node_label gpu-a100-2 nvidia.com/mig.config)" = all-3g.20gb ] || die "previous config not restored"
expect_event gpu-a100-2 MigReconfigureTimedOut
started=$(cat "$work"/rec-*.log | grep -c "gpu-a100-2: MigReconfigureStarted" || true)
[ "$started" -eq 1 ] || die "reshape of gpu-a100-2 started $started times"
follows "$status_a" || die "restarted replica leads too"
[ "$(kc get hpa stuck -o jsonpath='{.spec.maxReplicas}')" = 2 ] || die "stuck maxReplicas changed"
[ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt 9 ] || die "maxReplicas lost"
[ "$(node_label gpu-a100-0 nvidia.com/device-plugin.config)" = "$cfg" ] || die "config changed by the new leader"
[ "$(cat "$work"/rec-*.log | grep -c TimeSlicingStarted)" -eq 1 ] || die "time-slicing applied twice"
# Read the page whole first: `curl | grep -q` fails under pipefail when grep stops reading early.
metrics=$(rec_status "$status_b" /metrics) || die "no /metrics"
grep -q gpuscale_reconciler_reconciles_total <<<"$metrics" || die "no metrics"

step "the shipped Service and NetworkPolicy pass kube-apiserver's validation"
kc apply -f "$src/manifests/reconciler/namespace.yaml" >/dev/null
for f in service network-policy; do
  kc apply --dry-run=server -f "$src/manifests/reconciler/$f.yaml" >/dev/null || die "$f.yaml rejected"
done

step "status pages: probes open; /plan, /leader, /metrics only for callers RBAC allows"
http_code() { curl -sk -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }
for path in /plan /leader /metrics; do
  [ "$(http_code "http://127.0.0.1:$port_b$path")" = 404 ] || die "$path on the probe port"
  # No credentials: system:anonymous, whom RBAC allows nothing.
  [ "$(http_code "https://127.0.0.1:$status_b$path")" = 403 ] || die "$path without credentials"
done
[ "$(http_code "https://127.0.0.1:$status_b/readyz")" = 200 ] || die "/readyz on the status port"
# A ServiceAccount token, checked by TokenReview; /metrics granted by a nonResourceURLs rule.
kc -n default create serviceaccount scraper >/dev/null
kc apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-reconciler-metrics-reader}
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-reconciler-metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-reconciler-metrics-reader}
subjects:
- {kind: ServiceAccount, name: scraper, namespace: default}
YAML
token=$(kc -n default create token scraper)
as_scraper() { http_code -H "Authorization: Bearer $token" "https://127.0.0.1:$status_b$1"; }
scraper_reads_metrics() { [ "$(as_scraper /metrics)" = 200 ]; }
eventually 30 "the scraper's token reads /metrics" scraper_reads_metrics
[ "$(as_scraper /plan)" = 403 ] || die "/plan for a token RBAC allows only /metrics"
[ "$(http_code -H "Authorization: Bearer not-a-token" "https://127.0.0.1:$status_b/plan")" = 401 ] ||
  die "/plan with a bad token"
echo "PASS"
