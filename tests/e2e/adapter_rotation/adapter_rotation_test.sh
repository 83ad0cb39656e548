#!/usr/bin/env bash
# Certificates rotate without a restart, behind the real aggregator, under load: gpuscale-adapter in
# in-cluster mode on loopback, registered through APIServices that verify it (caBundle, no
# insecureSkipTLSVerify), its serving pair in files laid out as the kubelet lays out a Secret volume
# (tls.crt -> ..data/tls.crt, ..data swapped atomically when the Secret changes). While a client
# reads the metric through kube-apiserver every 200 ms and a real HPA reads it every 5 s:
#   1. the serving certificate is renewed under the same CA (the chart's and cert-manager's
#      renewals): the adapter serves the new one (reload counted, new expiry exported, a new TLS
#      connection sees the new serial);
#   2. the CA is rotated as docs/operations.md says: the caBundle gets the old and the new CA, the
#      Secret a pair of the new CA, then the caBundle only the new CA.
# What must hold throughout: no read through the aggregator fails, the APIServices never leave
# Available, the HPA never reports a failed metric read (no FailedGetPodsMetric event, ScalingActive
# True at the end), and the adapter process is the one that started.
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
adapter_e2e_begin adapter-rotation /usr/bin/openssl /usr/bin/python3 /usr/bin/curl
e2e_show_on_failure "$work/adapter.log" "$work/reads.log" "$work/available.log" \
  "$work/prometheus/prometheus.log"

step "start the control plane, a KWOK node and the Deployment web (2 pods)"
e2e_cluster_up
e2e_kwok_node rotation-node
e2e_web_deployment default 2 rotation-node
running_is() { [ "$(e2e_running default app=web)" -eq "$1" ]; }
eventually 120 "two Running web pods" running_is 2

step "their Triton counters, Prometheus"
adapter_pod_exporter default app=web

# The serving pair as a Secret volume: files are links into ..data, which points at one
# timestamped folder per version and is replaced with rename(2).
tls=$work/tls
mkdir -p "$tls"
new_ca() { # name
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$1" \
    -keyout "$tls/$1.key" -out "$tls/$1.crt" 2>/dev/null
}
publish_pair() { # ca-name version
  local dir=$tls/..$2
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -CA "$tls/$1.crt" -CAkey "$tls/$1.key" -subj "/CN=gpuscale-adapter-$2" \
    -addext subjectAltName=DNS:gpuscale-adapter.gpuscale.svc,DNS:localhost,IP:127.0.0.1 \
    -keyout "$dir/serving.key" -out "$dir/serving.crt" 2>/dev/null
  cp "$tls/$1.crt" "$dir/ca.crt"
  ln -sfn "..$2" "$tls/..data_tmp"
  mv -T "$tls/..data_tmp" "$tls/..data"
  [ -L "$tls/serving.crt" ] || ln -s ..data/serving.crt "$tls/serving.crt"
  [ -L "$tls/serving.key" ] || ln -s ..data/serving.key "$tls/serving.key"
}
set_ca_bundle() { # ca-name...
  local bundle name api
  bundle=$(for name in "$@"; do cat "$tls/$name.crt"; done | base64 -w0)
  for api in v1beta1.custom.metrics.k8s.io v1beta2.custom.metrics.k8s.io; do
    kc patch apiservice "$api" --type merge -p "{\"spec\":{\"caBundle\":\"$bundle\"}}" >/dev/null
  done
}
served_serial() {
  openssl s_client -connect "127.0.0.1:$ADAPTER_PORT" -servername gpuscale-adapter.gpuscale.svc \
    </dev/null 2>/dev/null | openssl x509 -noout -serial
}
file_serial() { openssl x509 -noout -serial -in "$tls/serving.crt"; }
metric() { # family
  curl -sk --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" \
    "https://127.0.0.1:$ADAPTER_PORT/metrics" | awk -v f="$1" '$1 == f {print $2}'
}
reloads() { metric 'gpuscale_serving_tls_reloads_total{result="success"}'; }

step "the adapter, its pair re-read every second, behind APIServices that verify it"
new_ca ca-1
publish_pair ca-1 v1
adapter_stack_init "$work" "$adapter" "$src/rules/triton.yaml"
adapter_stack_identity
# adapter_stack_register puts $work/tls/ca.crt into the caBundle.
cp "$tls/ca-1.crt" "$tls/ca.crt"
ADAPTER_EXTRA_ARGS=(--tls-reload-interval 1s)
adapter_stack_start "$prom_url"
pid=$ADAPTER_PID
adapter_stack_register
[ -z "$(kc get apiservice v1beta1.custom.metrics.k8s.io -o jsonpath='{.spec.insecureSkipTLSVerify}')" ] ||
  die "the APIService skips verification"
path=/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us
served() { kc get --raw "$path" | grep -q '"avg_time_queue_us"'; }
eventually 120 "the metric through the aggregator" served

step "an HPA reading it, a client reading every 200 ms, the APIServices watched every second"
e2e_hpa default web 2 4 avg_time_queue_us 1000 >/dev/null
hpa_active() {
  [ "$(kc -n default get hpa web \
    -o jsonpath='{.status.conditions[?(@.type=="ScalingActive")].status}')" = True ]
}
eventually 120 "the HPA reads the metric (ScalingActive)" hpa_active
: >"$work/reads.log"
(
  while :; do
    if out=$(kc get --raw "$path" 2>&1); then echo "ok" >>"$work/reads.log"; else
      echo "FAIL $(date -u +%T) $out" >>"$work/reads.log"; fi
    sleep 0.2
  done
) &
reader=$!
(
  while :; do
    for api in v1beta1.custom.metrics.k8s.io v1beta2.custom.metrics.k8s.io; do
      echo "$(date -u +%T) $api $(kc get apiservice "$api" \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" >>"$work/available.log"
    done
    sleep 1
  done
) &
watcher=$!
e2e_on_exit "kill $reader $watcher 2>/dev/null || true"
sleep 10

step "1. the serving certificate renewed under the same CA"
before=$(reloads)
expiry_before=$(metric gpuscale_serving_certificate_expiry_timestamp_seconds)
sleep 1  # the new certificate's notAfter differs from the old one's
publish_pair ca-1 v2
renewed() { [ "$(reloads)" != "$before" ] && [ "$(served_serial)" = "$(file_serial)" ]; }
eventually 30 "the adapter serves the renewed certificate" renewed
[ "$(metric gpuscale_serving_certificate_expiry_timestamp_seconds)" != "$expiry_before" ] ||
  die "the expiry metric did not follow the renewal"
sleep 15

step "2. the CA rotated: both CAs in the bundle, the pair of the new CA, then the new CA alone"
new_ca ca-2
set_ca_bundle ca-1 ca-2
sleep 5
before=$(reloads)
publish_pair ca-2 v3
eventually 30 "the adapter serves the pair of the new CA" renewed
sleep 10
set_ca_bundle ca-2
sleep 20

kill "$reader" "$watcher" 2>/dev/null || true
wait "$reader" "$watcher" 2>/dev/null || true
step "what held"
reads=$(grep -c '^ok' "$work/reads.log" || true)
failed=$(grep -c '^FAIL' "$work/reads.log" || true)
echo "reads through the aggregator: $reads ok, $failed failed"
[ "$failed" -eq 0 ] || die "reads failed during the rotations: $(grep '^FAIL' "$work/reads.log" | head -3)"
[ "$reads" -gt 100 ] || die "too few reads ($reads)"
if grep -v ' True$' "$work/available.log"; then die "an APIService left Available (above)"; fi
hpa_active || die "the HPA is not ScalingActive"
if event_reasons web | grep -E 'FailedGetPodsMetric|FailedComputeMetricsReplicas'; then
  die "the HPA failed to read its metric (above)"
fi
kill -0 "$pid" 2>/dev/null && [ "$ADAPTER_PID" = "$pid" ] || die "the adapter restarted"
grep -c "TLS context reloaded" "$work/adapter.log"
grep "TLS context reloaded" "$work/adapter.log" | tail -2
echo "PASS"
