#!/usr/bin/env bash
# A deposed leader sends nothing more, even from inside the client's retries: two reconciler
# replicas on the real control plane (tests/cluster) with gpuscale-sim as the GPU Operator
# (scenario.yaml), both as the ServiceAccount of manifests/reconciler with its RBAC and admission
# policies (tests/e2e/lib/reconciler_identity.sh; the proxy passes its token through), their Lease
# in gpuscale. Replica a talks to kube-apiserver through fault_proxy.py, replica b directly.
#   1. a leads. Every write of a is answered 429 with Retry-After 10 s (the proxy does not forward
#      it), so each write of a waits in the client's retry loop (up to 3 x 10 s); Triton arrives and
#      gives a something to write.
#   2. Then a's Lease requests are dropped: its renewals stop. b takes the Lease over once it has
#      not changed for the lease duration (15 s), which is after a's leadership ended by a's own
#      clock (renew deadline 10 s).
#   3. Once b holds the Lease, the proxy forwards every write again (only a's Lease requests stay
#      dropped). A write of a sent after that would reach kube-apiserver: the proxy logs none. a
#      ends (exit 1, "lost the lease").
# A client that asked the fence once per call would sleep through the Retry-After and send the
# retry after b had taken over (the proxy logs it answered, e.g. a PATCH answered 409).
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
# Shell helpers: tests/e2e/lib/common.sh, lib.sh (the fault proxy).
set -euo pipefail
# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-fence
e2e_show_on_failure "$work/rec-a.log" "$work/rec-b.log" "$work/proxy.log"

step "start the control plane, gpuscale-sim, the fault proxy; replica a through it, b directly"
e2e_cluster_up --scenario "$here/scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
reconciler_fault_proxy
# shellcheck source=../lib/reconciler_identity.sh
source "$src/tests/e2e/lib/reconciler_identity.sh"
reconciler_identity "$work/reconciler.kubeconfig" act
proxied "$work/reconciler.kubeconfig" >"$work/reconciler-proxied.kubeconfig"

start_reconciler() { # NAME KUBECONFIG STATUS_PORT
  e2e_spawn "$work/rec-$1.log" "$rec" run --kubeconfig "$2" --policy "$here/policy.yaml" \
    --leader-elect-identity "$1" --leader-elect-namespace gpuscale --state-namespace gpuscale \
    --lease-duration 15s --renew-deadline 10s --retry-period 1s --resync-period 2s \
    --health-bind-address "127.0.0.1:$(free_port)" --secure-status-bind-address "127.0.0.1:$3" \
    --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG"
  eval "pid_$1=$SPAWNED_PID"
}
leads() { [ "$(rec_status "$1" /leader)" = true ]; }
follows() { [ "$(rec_status "$1" /leader)" = false ]; }
status_a=$(free_port)
status_b=$(free_port)
start_reconciler a "$work/reconciler-proxied.kubeconfig" "$status_a"
eventually 60 "replica a leads" leads "$status_a"
start_reconciler b "$work/reconciler.kubeconfig" "$status_b"
eventually 60 "replica b follows" follows "$status_b"

step "1. every write of a answered 429 (Retry-After 10 s); Triton gives it something to write"
writes='"methods": ["POST", "PUT", "PATCH", "DELETE"]'
lease='"^[A-Z]+ /apis/coordination\\.k8s\\.io/v1/namespaces/gpuscale/leases"'
set_rules "{\"throttle\": {$writes, \"match\": \"^[A-Z]+ /(?!apis/coordination\\\\.k8s\\\\.io/)\", \"every\": 1, \"retryAfter\": 10}}"
kc apply -f "$here/triton.yaml" >/dev/null
throttled() { [ "$(grep -c ' 429 injected$' "$work/proxy.log" || true)" -ge 1 ]; }
eventually 60 "a write of replica a throttled" throttled
leads "$status_a" || die "replica a lost the Lease before its renewals were dropped"

step "2. a's Lease renewals dropped: b takes over"
set_rules "{\"throttle\": {$writes, \"match\": \"^[A-Z]+ /(?!apis/coordination\\\\.k8s\\\\.io/)\", \"every\": 1, \"retryAfter\": 10}, \"drop\": [$lease]}"
eventually 90 "replica b leads" leads "$status_b"

step "3. after the handover the proxy forwards writes again: none of a's arrives"
echo "== handover: replica b holds the Lease" >>"$work/proxy.log"
set_rules "{\"drop\": [$lease]}"
gone() { ! kill -0 "$pid_a" 2>/dev/null; }
eventually 90 "replica a ended" gone
rc=0
e2e_stop "$pid_a" || rc=$?
[ "$rc" -eq 1 ] || die "replica a exited with $rc, not 1 (lost the lease)"
grep -q "lost the lease" "$work/rec-a.log" || die "replica a did not say it lost the lease"
# Every write line after the handover mark whose last field is a status code was answered by
# kube-apiserver: a write of the deposed replica that got through.
late=$(awk '/^== handover/ { after = 1; next }
            after && $1 ~ /^(POST|PUT|PATCH|DELETE)$/ && $NF ~ /^[0-9]+$/' "$work/proxy.log")
[ -z "$late" ] || die "writes of the deposed replica reached kube-apiserver after the handover: $late"
echo "   429s answered to a: $(grep -c ' 429 injected$' "$work/proxy.log"), Lease requests dropped: $(grep -c ' dropped$' "$work/proxy.log" || true), writes a's client gave up as not the leader: $(grep -c 'not sent: not the leader' "$work/rec-a.log" || true)"
follows "$status_b" && die "replica b no longer leads"
echo "PASS"
