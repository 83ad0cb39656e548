#!/usr/bin/env bash
# gpuscale next to the real KEDA (its operator and metrics server, built from its Go modules by
# tests/cluster/build.sh), set up as docs/operations.md "Coexistence with KEDA" says:
#   tests/cluster/up.sh and one KWOK node -> a static exporter scraped by a real Prometheus:
#   web_requests_per_second{deployment="web"}, orders_queued and worker_queue_length ->
#   gpuscale-adapter (in-cluster mode) owns the APIServices of custom.metrics.k8s.io and
#   v1beta1.external.metrics.k8s.io (its caBundle: gpuscale's CA) and forwards the external
#   metrics no rule of its own serves to KEDA's metrics server, with a client certificate of its own
#   CA that KEDA's --requestheader-client-ca-file bundle trusts -> KEDA's metrics server asks the
#   operator (gRPC, mTLS) -> the operator runs the ScaledObject's `prometheus` trigger.
#   KEDA runs with certificate rotation off and its own APIService not applied.
# Checks:
#   1. external discovery lists gpuscale's orders_queued; gpuscale answers it itself, and answers
#      KEDA's s0-prometheus metric through KEDA's metrics server (counted as forwarded);
#   2. the ScaledObject `worker` (prometheus trigger, threshold 10, query value 30) makes KEDA's HPA
#      scale the Deployment worker to 3 while the HPA `web` (Object metric
#      web_requests_per_second of the Deployment web, averageValue 10, value 40) scales web to 4;
#      both HPAs report ScalingActive=True;
#   3. the load changes (queue 50, requests 60): worker goes to 5 and web to 6;
#   4. the APIService v1beta1.external.metrics.k8s.io keeps gpuscale's Service and caBundle the
#      whole time, and KEDA's operator generated no certificates (no Secret keda/kedaorg-certs);
#   5. the counter-check: KEDA's operator restarted with rotation on (as KEDA's own manifests run
#      it) makes its CA and writes it into that APIService's caBundle; kube-apiserver then refuses
#      gpuscale's serving certificate (x509: unknown authority) for every external metric,
#      gpuscale's own too; rotation off again and gpuscale's APIService re-applied, both kinds of
#      external metric answer again.
# Exit 77 (skipped) when the cluster binaries, KEDA's (tests/cluster/bin-extra/keda, or
# $GPUSCALE_CLUSTER_EXTRA_BIN/keda), gpuscale-adapter or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
# shellcheck source=../lib/keda_stack.sh
source "$(dirname "$0")/../lib/keda_stack.sh"
adapter_e2e_begin keda /usr/bin/openssl /usr/bin/python3
# KEDA is in the extra group of tests/cluster/build.sh.
keda_bin=${GPUSCALE_CLUSTER_EXTRA_BIN:-$cluster/bin-extra}/keda
e2e_require "$keda_bin/keda" "$keda_bin/keda-adapter"
e2e_on_exit 'keda_stack_stop'
e2e_show_on_failure "$work/adapter.log" "$work/keda-operator.log" \
  "$work/keda-metrics-apiserver.log" "$work/prometheus/prometheus.log"

step "start the control plane and one KWOK node"
e2e_cluster_up
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: {$GPUSCALE_KWOK_NODE_ANNOTATION: $GPUSCALE_KWOK_NODE_ANNOTATION_VALUE}
  labels: {type: kwok}
spec:
  taints: [{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
YAML
kc wait --for=condition=Ready node/kwok-node-0 --timeout=120s

step "the exporter and Prometheus"
mkdir -p "$work/exporter"
load() { # worker-queue web-requests
  cat >"$work/exporter/metrics.tmp" <<EOF
worker_queue_length $1
web_requests_per_second{namespace="default",deployment="web"} $2
orders_queued{namespace="default"} 7
EOF
  mv "$work/exporter/metrics.tmp" "$work/exporter/metrics"
}
load 30 40
adapter_exporter_prometheus

step "KEDA: CRDs and RBAC from its module, certificates of its own, operator and metrics server"
keda_stack_init "$work" "$keda_bin"
keda_stack_install
keda_stack_certificate
keda_stack_start

step "gpuscale-adapter owns custom and external metrics and forwards the rest to KEDA"
adapter_stack_init "$work" "$adapter" "$here/rules.yaml"
adapter_stack_identity
adapter_stack_certificate
client=$work/keda/fallback-client
ADAPTER_EXTRA_ARGS=(--external-metrics-fallback-url "https://127.0.0.1:$KEDA_PORT"
  --external-metrics-fallback-ca-file "$work/keda/certs/ca.crt"
  --external-metrics-fallback-client-cert-file "$client/tls.crt"
  --external-metrics-fallback-client-key-file "$client/tls.key")
adapter_stack_start "$prom_url"
adapter_stack_register
adapter_stack_register_external
ours_bundle=$(base64 -w0 <"$work/tls/ca.crt")
external_apiservice() {
  kc get apiservice v1beta1.external.metrics.k8s.io \
    -o jsonpath='{.spec.service.namespace}/{.spec.service.name} {.spec.caBundle}'
}
ours() { [ "$(external_apiservice)" = "gpuscale/gpuscale-adapter $ours_bundle" ]; }
ours || die "the external APIService is not gpuscale's: $(external_apiservice | cut -c1-80)"

step "the Deployments worker (KEDA) and web (gpuscale), the ScaledObject and the HPA"
deployment() { # name
  cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: app, image: registry.invalid/app:never-pulled}]
YAML
}
{
  deployment worker
  deployment web
  cat <<YAML
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker, namespace: default}
spec:
  scaleTargetRef: {name: worker}
  pollingInterval: 5
  minReplicaCount: 1
  maxReplicaCount: 8
  triggers:
  - type: prometheus
    metadata: {serverAddress: "$prom_url", query: "sum(worker_queue_length)", threshold: "10"}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Object
    object:
      describedObject: {apiVersion: apps/v1, kind: Deployment, name: web}
      metric: {name: web_requests_per_second}
      target: {type: AverageValue, averageValue: "10"}
YAML
} | kc apply -f - >/dev/null

step "external metrics: gpuscale's own, and KEDA's through gpuscale"
external() { kc get --raw "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/$1"; }
value_of() { # metric [query] -> the first item's value
  external "$1${2:+?$2}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["items"][0]["value"])'
}
lists() { kc get --raw /apis/external.metrics.k8s.io/v1beta1 | grep -q "\"$1\""; }
eventually 60 "external discovery lists orders_queued" lists orders_queued
eventually 60 "orders_queued is 7" test "$(value_of orders_queued 2>/dev/null)" = 7
keda_hpa_ready() { kc -n default get hpa keda-hpa-worker >/dev/null 2>&1; }
eventually 60 "KEDA created the HPA keda-hpa-worker" keda_hpa_ready
selector=labelSelector=scaledobject.keda.sh%2Fname%3Dworker
eventually 60 "s0-prometheus through gpuscale is 30" \
  test "$(value_of s0-prometheus "$selector" 2>/dev/null)" = 30
external "s0-prometheus?$selector"
echo
forwarded() {
  curl -sk --max-time 20 --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" \
    "https://127.0.0.1:$ADAPTER_PORT/metrics" |
    awk '/^gpuscale_adapter_external_fallback_requests_total/ {n += $NF} END {print n + 0}'
}
echo "external requests gpuscale forwarded to KEDA: $(forwarded)"
awk -v n="$(forwarded)" 'BEGIN {exit !(n > 0)}' || die "no request was forwarded to KEDA"

step "KEDA scales worker to 3, the HPA on gpuscale's custom metric scales web to 4"
replicas_are() { [ "$(kc -n default get deployment "$1" -o jsonpath='{.spec.replicas}')" = "$2" ]; }
active() { [ "$(kc -n default get hpa "$1" \
  -o jsonpath='{.status.conditions[?(@.type=="ScalingActive")].status}')" = True ]; }
eventually 120 "worker at 3 replicas" replicas_are worker 3
eventually 120 "web at 4 replicas" replicas_are web 4
active keda-hpa-worker || die "KEDA's HPA is not ScalingActive"
active web || die "the HPA web is not ScalingActive"
running() { [ "$(kc -n default get pods -l "app=$1" --field-selector=status.phase=Running \
  -o name | wc -l)" = "$2" ]; }
eventually 120 "3 worker pods Running" running worker 3
kc -n default get hpa

step "the load rises: worker to 5, web to 6"
load 50 60
eventually 120 "worker at 5 replicas" replicas_are worker 5
eventually 120 "web at 6 replicas" replicas_are web 6
kc -n default get hpa
kc -n default get scaledobject worker

step "the external APIService stayed gpuscale's; KEDA rotated no certificate"
ours || die "the external APIService changed: $(external_apiservice | cut -c1-80)"
holds 10 "the external APIService changed" ours
_as_available v1beta1.external.metrics.k8s.io || die "the external APIService is not Available"
# With rotation on, the operator would have made its CA and stored it here.
if kc -n keda get secret kedaorg-certs >/dev/null 2>&1; then
  die "KEDA's operator generated certificates (Secret keda/kedaorg-certs)"
fi
step "counter-check: KEDA's operator with rotation on takes the caBundle; external metrics break"
keda_stack_operator_with_rotation
taken() { ! ours && kc -n keda get secret kedaorg-certs >/dev/null 2>&1; }
eventually 60 "KEDA's rotator wrote its CA into the external APIService" taken
ca_subject() { external_apiservice | cut -d' ' -f2 | base64 -d | openssl x509 -noout -subject; }
echo "caBundle now: $(ca_subject)"
# kube-apiserver now checks gpuscale's serving certificate against KEDA's CA: every external metric
# fails, gpuscale's own too. (Its availability check does not verify the certificate, so the
# APIService may well go on saying Available.)
refused() {
  ! external orders_queued >"$work/raw.out" 2>&1 && grep -q ServiceUnavailable "$work/raw.out"
}
eventually 60 "gpuscale's external metric fails (503)" refused
cat "$work/raw.out"
x509_logged() { grep 'external.metrics.k8s.io.*unknown authority' "$work/cluster/logs/kube-apiserver.log"; }
x509_logged | tail -n 1 | cut -c1-240
x509_logged >/dev/null || die "kube-apiserver did not log the certificate failure"
kc get apiservice v1beta1.external.metrics.k8s.io

step "KEDA's operator without rotation again, gpuscale's APIService re-applied: Available"
kc -n keda delete secret kedaorg-certs >/dev/null
keda_stack_operator_without_rotation
adapter_stack_register_external
ours || die "the external APIService is not gpuscale's after re-applying it"
eventually 60 "orders_queued is 7 again" test "$(value_of orders_queued 2>/dev/null)" = 7
eventually 60 "s0-prometheus through gpuscale again" \
  test "$(value_of s0-prometheus "$selector" 2>/dev/null)" = 50
step "PASS"
