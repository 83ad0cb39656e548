#!/usr/bin/env bash
# gpuscale-adapter in cluster mode against a real tests/cluster control plane, objects from watch
# caches: a static exporter (scraped by a real Prometheus) has a counter per pod, the pods exist in
# the cluster (KWOK-less: unscheduled pods are API objects all the same). Checks:
#   1. a selector request (pods/*?labelSelector=app=web), direct over HTTPS and through the
#      aggregator, answers exactly the live matching pods;
#   2. in steady state, 20 more requests send no LIST to kube-apiserver (the client's own request
#      counter for pod lists does not move), every lookup is a cache hit, and the histogram of
#      kube-apiserver calls per served request adds nothing;
#   3. a pod created after start appears in the answer, a deleted one leaves it (the watch);
#   4. with --object-cache=false (prometheus-adapter's behaviour) every request LISTs.
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
adapter_e2e_begin adapter-cache /usr/bin/openssl /usr/bin/python3 /usr/bin/curl
e2e_show_on_failure "$work/adapter.log" "$work/prometheus/prometheus.log"

step "start the control plane"
e2e_cluster_up

step "pods, a static exporter and Prometheus"
pod() { # name app
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {app: $2}}
spec: {containers: [{name: c, image: example.invalid/none}]}
YAML
}
{ pod web-0 web; pod web-1 web; pod db-0 db; } | kc apply -f - >/dev/null
mkdir -p "$work/exporter"
write_metrics() { # pod...
  local p
  {
    echo '# TYPE app_requests_total counter'
    for p in "$@"; do echo "app_requests_total{namespace=\"default\",pod=\"$p\"} 7"; done
  } >"$work/exporter/metrics.tmp"
  mv "$work/exporter/metrics.tmp" "$work/exporter/metrics"
}
write_metrics web-0 web-1 web-2 db-0
adapter_exporter_prometheus

step "the adapter in cluster mode (objects from watch caches), registered through APIServices"
adapter_stack_init "$work" "$adapter" "$here/rules.yaml"
adapter_stack_identity
adapter_stack_certificate
adapter_stack_start "$prom_url"
adapter_stack_register

path='/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/app_requests_total?labelSelector=app%3Dweb'
direct() {
  curl -sf --cacert "$work/tls/ca.crt" --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" \
    "https://127.0.0.1:$ADAPTER_PORT$1"
}
names() { python3 -c 'import json,sys; print(" ".join(i["describedObject"]["name"] for i in json.load(sys.stdin)["items"]))'; }
metric() { # exposition-line-prefix: the sample's value, 0 when absent
  direct /metrics | python3 -c '
import sys
prefix = sys.argv[1]
print(next((float(l.rsplit(" ", 1)[1]) for l in sys.stdin if l.startswith(prefix)), 0))' "$1"
}
pod_lists='gpuscale_kube_client_requests_total{code="2xx",resource="pods",verb="list"}'
cache_hits='gpuscale_adapter_object_lookups_total{resource="pods",source="cache"}'
kube_per_request='gpuscale_apiserver_kube_requests_per_request_sum{route="custom_metric"}'

step "1. a selector request answers the live matching pods (direct and through kube-apiserver)"
answers() { [ "$(direct "$path" 2>/dev/null | names 2>/dev/null)" = "$1" ]; }
eventually 60 "the direct answer is web-0 web-1" answers "web-0 web-1"
[ "$(kc get --raw "$path" | names)" = "web-0 web-1" ] || die "aggregated: $(kc get --raw "$path")"
cache_used() {
  direct "$path" >/dev/null
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$(metric "$cache_hits")"
}
eventually 30 "the pods cache has synced and answers" cache_used

step "2. steady state: no LIST per request"
lists_before=$(metric "$pod_lists")
hits_before=$(metric "$cache_hits")
kube_before=$(metric "$kube_per_request")
for _ in $(seq 10); do direct "$path" >/dev/null; kc get --raw "$path" >/dev/null; done
lists_after=$(metric "$pod_lists")
hits_after=$(metric "$cache_hits")
kube_after=$(metric "$kube_per_request")
echo "pod LISTs $lists_before -> $lists_after, cache hits $hits_before -> $hits_after," \
  "kube-apiserver calls in served requests $kube_before -> $kube_after"
python3 - "$lists_before" "$lists_after" "$hits_before" "$hits_after" "$kube_before" \
  "$kube_after" <<'PY' || die "requests were not served from the cache alone"
import sys
lb, la, hb, ha, kb, ka = map(float, sys.argv[1:])
assert la == lb, "pod LISTs went from %s to %s" % (lb, la)
assert ha - hb == 20, "cache hits went from %s to %s" % (hb, ha)
assert ka == kb, "kube-apiserver calls made while serving: %s -> %s" % (kb, ka)
PY
direct /metrics | grep -E '^gpuscale_(adapter_object_lookups_total|apiserver_kube_requests_per_request_(sum|count)|auth_review_cache)'

step "3. the watch: a new pod appears, a deleted one leaves"
pod web-2 web | kc apply -f - >/dev/null
eventually 30 "web-2 appears" answers "web-0 web-1 web-2"
kc delete pod web-0 --grace-period=0 --wait=false >/dev/null
eventually 30 "web-0 leaves" answers "web-1 web-2"
[ "$(metric "$pod_lists")" = "$lists_after" ] || die "the watch path LISTed pods"

step "4. --object-cache=false lists per request, as prometheus-adapter"
adapter_stack_stop
ADAPTER_EXTRA_ARGS=(--object-cache=false)
adapter_stack_start "$prom_url"
eventually 60 "the uncached answer is web-1 web-2" answers "web-1 web-2"
lists_before=$(metric "$pod_lists")
for _ in $(seq 5); do direct "$path" >/dev/null; done
lists_after=$(metric "$pod_lists")
echo "uncached: pod LISTs $lists_before -> $lists_after"
python3 -c 'import sys; assert float(sys.argv[2]) - float(sys.argv[1]) == 5' \
  "$lists_before" "$lists_after" || die "expected one LIST per request without the cache"
echo "PASS"
