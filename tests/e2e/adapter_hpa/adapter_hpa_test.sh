#!/usr/bin/env bash
# The adapter behind the real aggregator, and the real HPA controller scaling on it (issue 8, item 1):
#   tests/cluster/up.sh -> a KWOK-run Deployment `triton` in `default` -> pod_exporter.py serves
#   Triton counters for its Running pods -> a real Prometheus scrapes them -> gpuscale-adapter (in-cluster
#   mode: front-proxy authentication, delegated TokenReview/SubjectAccessReview, pods LISTed from the
#   API, RBAC and ServiceAccount from manifests/adapter) registered through APIServices v1beta1/v1beta2
#   and an ExternalName Service -> checks:
#   1. `kubectl get --raw .../namespaces/default/pods/%2A/avg_time_queue_us` through kube-apiserver
#      lists exactly the Running pods with their queue time (v1beta1 and v1beta2);
#   2. through kube-apiserver a ServiceAccount without RBAC gets 403; directly at the adapter, with the
#      front-proxy certificate, the HPA controller's identity is allowed and that ServiceAccount is
#      refused by the adapter's SubjectAccessReview; X-Remote-User without that certificate is not
#      believed; the cluster CA's admin certificate authenticates as itself (x509);
#   3. an autoscaling/v2 HPA (Pods, averageValue 50, min 1, max 7) scales the Deployment to 7 while
#      queue time is high;
#   4. with Prometheus stopped the adapter answers 5xx, the HPA reports FailedGetPodsMetric and keeps
#      7 replicas past the downscale stabilization window although the load fell to zero (no made-up 0);
#   5. Prometheus back and the adapter restarted (same port, the APIService unchanged) with zero queue
#      time: the HPA scales back to 1.
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
e2e_init adapter-hpa
here=$src/tests/e2e/adapter_hpa
adapter=${GPUSCALE_ADAPTER_BIN:-$build/bin/gpuscale-adapter}
e2e_require_cluster
e2e_require "$adapter" /usr/bin/prometheus /usr/bin/openssl /usr/bin/python3
e2e_on_exit 'adapter_stack_stop'
e2e_on_exit '"$src/tests/support/prometheus_run.sh" stop "$work/prometheus"'
e2e_show_on_failure "$work/adapter.log" "$work/exporter.log" "$work/prometheus/prometheus.log" \
  "$work/cluster/logs/kube-controller-manager.log"

step "start the control plane"
e2e_cluster_up
pki=$GPUSCALE_PKI_DIR

step "a KWOK node and the Deployment triton (1 replica) in default"
node=kwok-node-0
kc apply -f - <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations: {$GPUSCALE_KWOK_NODE_ANNOTATION: "$GPUSCALE_KWOK_NODE_ANNOTATION_VALUE"}
  labels: {kubernetes.io/hostname: $node, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
YAML
kc wait --for=condition=Ready "node/$node" --timeout=180s
eventually 60 "default service account" kc -n default get serviceaccount default -o name
kc -n default apply -f - <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: triton}
spec:
  replicas: 1
  selector: {matchLabels: {app: triton}}
  template:
    metadata: {labels: {app: triton}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: triton
        image: registry.invalid/tritonserver:never-pulled
        resources: {requests: {cpu: 100m}}
YAML
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
prom_url=$("$src/tests/support/prometheus_run.sh" start "$work/prometheus" --scrape "$exporter" \
  --interval 1s)

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
kc -n default apply -f - <<YAML
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: triton}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: triton}
  minReplicas: 1
  maxReplicas: 7
  metrics:
  - type: Pods
    pods:
      metric: {name: avg_time_queue_us}
      target: {type: AverageValue, averageValue: "50"}
YAML
spec_replicas() { kc -n default get deployment triton -o jsonpath='{.spec.replicas}'; }
replicas_are() { [ "$(spec_replicas)" = "$1" ]; }
eventually 300 "the HPA scales triton to 7" replicas_are 7
eventually 240 "7 Running pods" running_is 7
kc -n default get hpa triton

step "Prometheus stopped: the adapter answers with an error, the HPA holds at 7"
echo 0 >"$work/queue_us"  # the load is gone, but nobody can see it
"$src/tests/support/prometheus_run.sh" stop "$work/prometheus"
metric_fails() { ! kc get --raw "$(metric_path v1beta1)" >/dev/null 2>&1; }
eventually 120 "the metric request fails while Prometheus is down" metric_fails
kc get --raw "$(metric_path v1beta1)" 2>&1 | tail -n 1 || true
condition() { # type -> "status reason"
  kc -n default get hpa triton -o jsonpath="{.status.conditions[?(@.type==\"$1\")].status} {.status.conditions[?(@.type==\"$1\")].reason}"
}
failed_get() { [ "$(condition ScalingActive)" = "False FailedGetPodsMetric" ]; }
eventually 120 "HPA ScalingActive=False FailedGetPodsMetric" failed_get
# Longer than the downscale stabilization window plus several HPA syncs: a made-up 0 would have
# scaled triton down by now.
stabilization=${GPUSCALE_HPA_DOWNSCALE_STABILIZATION:-30s}
hold=$((${stabilization%s} + 30))
holds "$hold" "the HPA scaled while Prometheus was down" replicas_are 7
failed_get || die "HPA condition changed while Prometheus was down: $(condition ScalingActive)"

step "Prometheus back (a new port) and the adapter restarted on its port: triton scales in to 1"
prom_url=$("$src/tests/support/prometheus_run.sh" start "$work/prometheus" --scrape "$exporter" \
  --interval 1s)
adapter_stack_stop
adapter_stack_start "$prom_url"
eventually 300 "the HPA scales triton to 1" replicas_are 1
kc -n default get hpa triton
step "PASS"
