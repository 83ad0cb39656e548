#!/usr/bin/env bash
# The inference autoscaling story behind the real aggregator and the real HPA controller, and its
# faults, on one cluster:
#   tests/cluster/up.sh with gpuscale-sim as the GPU Operator (scenario.yaml: gpu-a100-0 at
#   all-1g.5gb serving, gpu-a100-1 idle at all-3g.20gb whose first mig-manager run fails) -> a
#   KWOK-run Deployment `triton` in `default`, one nvidia.com/mig-1g.5gb per pod -> pod_exporter.py
#   serves Triton counters for its Running pods -> a real Prometheus scrapes them -> gpuscale-adapter
#   (in-cluster mode: front-proxy authentication, delegated TokenReview/SubjectAccessReview, pods
#   LISTed from the API, RBAC and ServiceAccount from manifests/adapter) registered through
#   APIServices v1beta1/v1beta2 and an ExternalName Service -> an HPA opted in to
#   gpuscale-reconciler (policy.yaml: MIG reshapes only). Checks:
#   1. `kubectl get --raw .../namespaces/default/pods/%2A/avg_time_queue_us` through kube-apiserver
#      lists exactly the Running pods with their queue time (v1beta1 and v1beta2); kube-apiserver
#      aggregated our OpenAPI v3 documents and logged no error about our APIServices;
#   2. through kube-apiserver a ServiceAccount without RBAC gets 403; directly at the adapter, with the
#      front-proxy certificate, the HPA controller's identity is allowed and that ServiceAccount is
#      refused by the adapter's SubjectAccessReview; X-Remote-User without that certificate is not
#      believed; the cluster CA's admin certificate authenticates as itself (x509);
#   3. an autoscaling/v2 HPA (Pods, averageValue 50, min 1, max 7) scales the Deployment to the 7
#      slices of gpu-a100-0 while queue time is high;
#   4. fault, mig-manager fails: at that ceiling the reconciler reshapes the idle gpu-a100-1; the
#      injected failure is reverted (previous config, state success, backoff), maxReplicas stays 7,
#      Events MigReconfigureFailed (node) and PartitionChangeIncomplete (HPA) say so, no pod moved;
#   5. fault, Prometheus stopped while the load falls to zero: through kube-apiserver the adapter
#      answers 503 with a Status naming the Prometheus connection failure, the HPA reports
#      ScalingActive=False FailedGetPodsMetric and keeps 7 replicas past the downscale stabilization
#      window (no made-up 0); the adapter's /metrics counts the failed Prometheus calls; Prometheus
#      back on its port: the adapter recovers by itself and the HPA scales in to 1;
#   6. fault, the adapter killed (SIGKILL) while the load rises again: the aggregator answers 503,
#      the APIServices turn Available=False, the HPA holds 1 replica; the adapter started again on
#      its port: the APIServices are Available again and the HPA scales to 7.
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter, gpuscale-sim, gpuscale-reconciler or
# prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
adapter_e2e_begin adapter-hpa /usr/bin/openssl /usr/bin/python3
rec=$build/bin/gpuscale-reconciler
e2e_require "$sim" "$rec"
e2e_show_on_failure "$work/adapter.log" "$work/exporter.log" "$work/prometheus/prometheus.log" \
  "$work/reconciler.log" "$work/sim.log" "$work/cluster/logs/kube-controller-manager.log"

step "start the control plane, gpuscale-sim and gpuscale-reconciler"
e2e_cluster_up --scenario "$here/scenario.yaml"
pki=$GPUSCALE_PKI_DIR
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
rec_url=http://127.0.0.1:$(free_port)
e2e_spawn "$work/reconciler.log" "$rec" run --kubeconfig "$KUBECONFIG" --policy "$here/policy.yaml" \
  --leader-elect-identity e2e --leader-elect-namespace default --resync-period 2s \
  --mig-timeout 30s --failure-backoff 10m --health-bind-address "${rec_url#http://}" \
  --secure-status-bind-address "127.0.0.1:$(free_port)"
eventually 60 "gpuscale-reconciler ready" curl -sf "$rec_url/readyz" -o /dev/null
for n in gpu-a100-0 gpu-a100-1; do kc wait --for=condition=Ready "node/$n" --timeout=180s; done

step "the Deployment triton (1 replica, one nvidia.com/mig-1g.5gb each) in default"
e2e_triton_deployment
running() { kc -n default get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l; }
running_is() { [ "$(running)" -eq "$1" ]; }
eventually 180 "one Running triton pod" running_is 1

step "the pod exporter and Prometheus"
echo 400000 >"$work/queue_us"
e2e_spawn "$work/exporter.log" python3 "$here/pod_exporter.py" --kubectl "$bin/kubectl" \
  --namespace default --selector app=triton --queue-file "$work/queue_us" \
  --port-file "$work/exporter.port"
eventually 60 "exporter port file" test -s "$work/exporter.port"
exporter=127.0.0.1:$(cat "$work/exporter.port")
prom_url=$("$prometheus_run" start "$work/prometheus" --scrape "$exporter" --interval 1s)

step "the adapter: identity (manifests/adapter RBAC), serving certificate, in-cluster mode, APIServices"
adapter_stack_init "$work" "$adapter" "$src/rules/triton.yaml"
adapter_stack_identity
adapter_stack_certificate
adapter_stack_start "$prom_url"
adapter_stack_register

metric_path() { echo "/apis/custom.metrics.k8s.io/$1/namespaces/default/pods/%2A/avg_time_queue_us"; }
# items VERSION: "pod value" lines of the MetricValueList, through kube-apiserver.
items() {
  kc get --raw "$(metric_path "$1")" 2>/dev/null | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for i in doc["items"]:
    print(i["describedObject"]["name"], i.get("value", i.get("metric", {}).get("value")))'
}
pods_now() { kc -n default get pods -l app=triton --field-selector=status.phase=Running \
  -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
# Every Running pod is listed, and each value is a high queue time (~400 ms, far above 50).
items_match_high() {
  local got
  got=$(items "$1") || return 1
  [ -n "$got" ] || return 1
  [ "$(awk '{print $1}' <<<"$got" | sort)" = "$(pods_now)" ] || return 1
  python3 - "$got" <<'PY'
import sys
def milli(q):
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)
vals = [milli(line.split()[1]) for line in sys.argv[1].splitlines()]
sys.exit(0 if vals and all(v > 100000 for v in vals) else 1)
PY
}
step "kubectl get --raw through kube-apiserver lists the pod's avg_time_queue_us"
# The relister finds the metric once Prometheus has scraped it (every 5 s here).
discovered() { kc get --raw /apis/custom.metrics.k8s.io/v1beta1 | grep -q '"pods/avg_time_queue_us"'; }
eventually 120 "discovery lists pods/avg_time_queue_us" discovered
eventually 180 "v1beta1 items for the Running pods" items_match_high v1beta1
eventually 60 "v1beta2 items for the Running pods" items_match_high v1beta2
kc get --raw "$(metric_path v1beta1)"
echo

step "kube-apiserver aggregated our OpenAPI and logged no errors about our APIServices"
openapi_lists_group() { kc get --raw /openapi/v3 | grep -q '"apis/custom.metrics.k8s.io/v1beta2"'; }
eventually 120 "/openapi/v3 through kube-apiserver lists custom.metrics.k8s.io/v1beta2" \
  openapi_lists_group
if grep -E '^E[0-9]{4} ' "$work/cluster/logs/kube-apiserver.log" | grep -iE 'custom\.metrics'; then
  die "kube-apiserver logged errors about the adapter's APIServices (above)"
fi

step "authentication and authorization are delegated to kube-apiserver"
# Through kube-apiserver: a ServiceAccount without RBAC is refused (token only, no admin certificate).
kc create serviceaccount nobody -n default
nobody=$(kc -n default create token nobody)
as_nobody() { "$bin/kubectl" --kubeconfig=/dev/null --server "$GPUSCALE_APISERVER_URL" \
  --certificate-authority "$pki/ca.crt" --token "$nobody" "$@"; }
denied=$(as_nobody get --raw "$(metric_path v1beta1)" 2>&1) && die "nobody was allowed: $denied"
grep -q -i forbidden <<<"$denied" || die "nobody was not refused with 403: $denied"
# Directly at the adapter, as the aggregator calls it: the front-proxy client certificate and the
# caller in X-Remote-User. The adapter asks kube-apiserver (SubjectAccessReview) about that caller.
direct() { # user [curl args...] -> HTTP status
  local user=$1
  shift
  curl -sk --max-time 20 -o "$work/direct.body" -w '%{http_code}' -H "X-Remote-User: $user" "$@" \
    "https://127.0.0.1:$ADAPTER_PORT$(metric_path v1beta1)"
}
proxy_cert=(--cert "$pki/front-proxy-client.crt" --key "$pki/front-proxy-client.key")
code=$(direct system:serviceaccount:kube-system:horizontal-pod-autoscaler "${proxy_cert[@]}")
[ "$code" = 200 ] || die "the HPA controller's identity got HTTP $code: $(cat "$work/direct.body")"
code=$(direct system:serviceaccount:default:nobody "${proxy_cert[@]}")
[ "$code" = 403 ] || die "nobody through the front proxy got HTTP $code: $(cat "$work/direct.body")"
# The same headers without the front-proxy certificate are not believed.
code=$(direct admin -H 'X-Remote-Group: system:masters')
[ "$code" = 401 ] || [ "$code" = 403 ] || die "forged X-Remote-User got HTTP $code"
# A client certificate from the cluster CA that is not an allowed front-proxy name: the headers are
# ignored and the certificate's own user (kubernetes-admin, system:masters) is used.
code=$(direct nobody-forged --cert "$pki/admin.crt" --key "$pki/admin.key")
[ "$code" = 200 ] || die "the admin's client certificate got HTTP $code"

step "an HPA on avg_time_queue_us (Pods, averageValue 50, 1..7) scales triton to 7"
e2e_triton_hpa default
spec_replicas() { kc -n default get deployment triton -o jsonpath='{.spec.replicas}'; }
replicas_are() { [ "$(spec_replicas)" = "$1" ]; }
max_replicas() { kc -n default get hpa triton -o jsonpath='{.spec.maxReplicas}'; }
eventually 300 "the HPA scales triton to 7" replicas_are 7
eventually 240 "7 Running pods" running_is 7
kc -n default get hpa triton
pod_uids() { kc -n default get pods -l app=triton -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
uids7=$(pod_uids)

step "fault: mig-manager fails the reshape of the idle gpu-a100-1; reverted, the ceiling stays 7"
outcome() { annotation node "$1" gpuscale.io/outcome; }
reverted() {
  outcome gpu-a100-1 | grep -q '"result":"failed"' &&
    [ "$(node_label gpu-a100-1 nvidia.com/mig.config)" = all-3g.20gb ] &&
    [ "$(node_label gpu-a100-1 nvidia.com/mig.config.state)" = success ]
}
eventually 120 "the failed reshape of gpu-a100-1 is reverted" reverted
outcome gpu-a100-1
echo
[ -n "$(annotation node gpu-a100-1 gpuscale.io/backoff-until)" ] || die "gpu-a100-1 is not backing off"
[ "$(node_allocatable gpu-a100-1 nvidia.com/mig-3g.20gb)" = 2 ] || die "old geometry not advertised"
[ "$(node_label gpu-a100-1 nvidia.com/gpu.deploy.device-plugin)" = true ] || die "operands paused"
expect_event gpu-a100-1 MigReconfigureFailed
expect_event triton PartitionChangeIncomplete
[ "$(max_replicas)" = 7 ] || die "maxReplicas is $(max_replicas) after the failed reshape"
[ "$(pod_uids)" = "$uids7" ] || die "triton pods were disturbed"
[ "$(grep -c 'gpu-a100-1: MigReconfigureStarted' "$work/reconciler.log")" = 1 ] ||
  die "the reshape of gpu-a100-1 did not start exactly once"

step "fault: Prometheus stopped while the load falls to 0; the adapter answers 503, the HPA holds 7"
prom_port=${prom_url##*:}
"$prometheus_run" stop "$work/prometheus"
echo 0 >"$work/queue_us" # the load is gone, but nobody can see it
# raw_error PATH: kubectl's verbose request line (the HTTP status) and the error it printed.
raw_error() { ! kc get --raw "$1" -v=6 >"$work/raw.out" 2>&1; }
eventually 120 "the metric request fails while Prometheus is down" raw_error "$(metric_path v1beta1)"
grep -E '503 Service Unavailable' "$work/raw.out" | tail -n 1
grep -q '503 Service Unavailable' "$work/raw.out" || die "not a 503: $(cat "$work/raw.out")"
grep '^Error from server' "$work/raw.out"
grep -q '^Error from server (ServiceUnavailable): unable to fetch metrics: prometheus connection failed' \
  "$work/raw.out" || die "the Status does not name the cause: $(tail -n 1 "$work/raw.out")"
condition() { # type -> "status reason"
  kc -n default get hpa triton -o jsonpath="{.status.conditions[?(@.type==\"$1\")].status} {.status.conditions[?(@.type==\"$1\")].reason}"
}
failed_get() { [ "$(condition ScalingActive)" = "False FailedGetPodsMetric" ]; }
eventually 120 "HPA ScalingActive=False FailedGetPodsMetric" failed_get
# The adapter's Status reaches the HPA: its condition names the cause too.
scaling_active=$(kc -n default get hpa triton \
  -o jsonpath='{.status.conditions[?(@.type=="ScalingActive")].message}')
echo "ScalingActive: $scaling_active"
grep -q 'prometheus connection failed' <<<"$scaling_active" || die "the HPA does not see the cause"
# Longer than the downscale stabilization window plus several HPA syncs: a made-up 0 would have
# scaled triton down by now.
stabilization=${GPUSCALE_HPA_DOWNSCALE_STABILIZATION:-30s}
holding() { replicas_are "$1" && failed_get; }
holds $((${stabilization%s} + 30)) "the HPA left 7 replicas or FailedGetPodsMetric while Prometheus was down" \
  holding 7
[ "$(max_replicas)" = 7 ] || die "maxReplicas changed while Prometheus was down"
# The degraded mode is counted in the adapter's /metrics (as the admin, directly at the adapter).
connection_failures() {
  curl -sk --max-time 20 --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "https://127.0.0.1:$ADAPTER_PORT/metrics" |
    awk '/^gpuscale_adapter_prometheus_requests_total\{.*result="connection failed"/ {n += $NF}
         END {print n + 0}'
}
failures=$(connection_failures)
echo "Prometheus calls that could not connect: $failures"
awk -v n="$failures" 'BEGIN {exit !(n > 0)}' || die "the outage is not counted in /metrics"

step "Prometheus back on its port: the adapter recovers by itself, triton scales in to 1"
"$prometheus_run" start "$work/prometheus" --scrape "$exporter" --interval 1s --port "$prom_port"
eventually 300 "the HPA scales triton to 1" replicas_are 1
kc -n default get hpa triton

step "fault: the adapter killed while the load rises; the APIServices go unavailable, the HPA holds 1"
adapter_stack_stop KILL
echo 400000 >"$work/queue_us" # the load is back, but nobody can see it
unavailable() { [ "$(kc get apiservice "$1.custom.metrics.k8s.io" \
  -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = False ]; }
eventually 120 "APIService v1beta1 Available=False" unavailable v1beta1
eventually 60 "APIService v1beta2 Available=False" unavailable v1beta2
kc get apiservice v1beta1.custom.metrics.k8s.io
raw_error "$(metric_path v1beta1)" || die "the metric answered with the adapter down"
grep '^Error from server' "$work/raw.out"
grep -q '503 Service Unavailable' "$work/raw.out" || die "not a 503: $(cat "$work/raw.out")"
eventually 60 "HPA ScalingActive=False FailedGetPodsMetric" failed_get
holds 20 "the HPA left 1 replica or FailedGetPodsMetric while the adapter was down" holding 1

step "the adapter started again on its port: the APIServices are Available, triton scales to 7"
port_before=$ADAPTER_PORT
adapter_stack_start "$prom_url"
[ "$ADAPTER_PORT" = "$port_before" ] || die "the adapter came back on another port"
kc wait --for=condition=Available apiservice/v1beta1.custom.metrics.k8s.io \
  apiservice/v1beta2.custom.metrics.k8s.io --timeout=180s
eventually 300 "the HPA scales triton to 7" replicas_are 7
[ "$(max_replicas)" = 7 ] || die "maxReplicas is $(max_replicas)"
kc -n default get hpa triton
# Back at the ceiling, gpu-a100-1 is still backing off: no second attempt.
[ "$(grep -c 'gpu-a100-1: MigReconfigureStarted' "$work/reconciler.log")" = 1 ] ||
  die "the reshape of gpu-a100-1 was retried during its backoff"
step "PASS"
