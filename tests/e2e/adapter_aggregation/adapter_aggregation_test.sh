#!/usr/bin/env bash
# gpuscale-adapter as the real aggregator of a tests/cluster control plane sees it: a static
# exporter scraped by a real Prometheus, the adapter in in-cluster mode (--discovery-interval 2s)
# registered through APIServices v1beta1/v1beta2 and an ExternalName Service. Checks:
#   1. the <<.Resource>> rule maps the label `poddisruptionbudget` (a resource only API discovery
#      knows of): /apis/custom.metrics.k8s.io/v1beta1 lists poddisruptionbudgets.policy/p_total;
#   2. the rule whose override names widgets.example.com loads before that CRD exists (no metric),
#      and once the CRD is created the adapter recompiles its rules and `kubectl get --raw` of
#      .../namespaces/default/widgets.example.com/w1/w_total through kube-apiserver serves the value;
#   3. kube-apiserver aggregated our OpenAPI: /openapi/v3 lists apis/custom.metrics.k8s.io/v1beta1,
#      whose document (and /openapi/v2) defines MetricValueList;
#   4. kube-apiserver's aggregated discovery (Accept apidiscovery.k8s.io v2) lists the group, which
#      it built by falling back to plain discovery after our 406;
#   5. kube-apiserver's log has no errors about our APIServices or their OpenAPI.
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
adapter_e2e_begin adapter-aggregation /usr/bin/openssl /usr/bin/python3 /usr/bin/curl
e2e_show_on_failure "$work/adapter.log" "$work/prometheus/prometheus.log" \
  "$work/cluster/logs/kube-apiserver.log"

step "start the control plane"
e2e_cluster_up

step "a static exporter and Prometheus"
mkdir -p "$work/exporter"
cat >"$work/exporter/metrics" <<'TEXT'
# TYPE w_total counter
w_total{namespace="default",widget="w1"} 3
# TYPE p_total counter
p_total{namespace="default",poddisruptionbudget="pdb1"} 5
TEXT
adapter_exporter_prometheus

step "the adapter in in-cluster mode, registered through APIServices"
adapter_stack_init "$work" "$adapter" "$here/rules.yaml"
adapter_stack_identity
adapter_stack_certificate
ADAPTER_EXTRA_ARGS=(--discovery-interval 2s)
adapter_stack_start "$prom_url"
adapter_stack_register

lists() { kc get --raw /apis/custom.metrics.k8s.io/v1beta1 | grep -q "\"$1\""; }
step "1. a <<.Resource>> label names a resource only API discovery knows"
eventually 120 "discovery lists poddisruptionbudgets.policy/p_total" \
  lists poddisruptionbudgets.policy/p_total
kc get --raw /apis/custom.metrics.k8s.io/v1beta1/namespaces/default/poddisruptionbudgets.policy/pdb1/p_total
echo
grep -q 'the cluster does not serve "widgets.example.com" (yet)' "$work/adapter.log" ||
  die "no warning about the override naming the missing CRD"
lists widgets.example.com/w_total && die "w_total is listed before its CRD exists"

step "2. the CRD widgets.example.com appears: the override's rule serves"
kc apply -f - <<'YAML' >/dev/null
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
eventually 90 "discovery lists widgets.example.com/w_total" lists widgets.example.com/w_total
widget_value() {
  kc get --raw "/apis/custom.metrics.k8s.io/$1/namespaces/default/widgets.example.com/w1/w_total" |
    python3 -c '
import json, sys
item = json.load(sys.stdin)["items"][0]
assert item["describedObject"]["kind"] == "Widget", item
assert item["describedObject"]["apiVersion"] == "example.com/v1", item
print(item["value"])'
}
[ "$(widget_value v1beta1)" = 3 ] || die "v1beta1 widget value: $(widget_value v1beta1)"
[ "$(widget_value v1beta2)" = 3 ] || die "v1beta2 widget value: $(widget_value v1beta2)"
grep -q "compiling the rules again" "$work/adapter.log" || die "no recompilation logged"
curl -sk --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" \
  "https://127.0.0.1:$ADAPTER_PORT/metrics" | grep -E '^gpuscale_api_discovery_(changes_total|degraded)'

step "3. kube-apiserver aggregated our OpenAPI documents"
v3_lists() { kc get --raw /openapi/v3 | grep -q '"apis/custom.metrics.k8s.io/v1beta1"'; }
eventually 120 "/openapi/v3 lists apis/custom.metrics.k8s.io/v1beta1" v3_lists
kc get --raw /openapi/v3/apis/custom.metrics.k8s.io/v1beta2 |
  grep -q '"io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValueList"' ||
  die "the v1beta2 OpenAPI v3 document through kube-apiserver lacks MetricValueList"
v2_has() {
  kc get --raw /openapi/v2 | grep -q '"io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValueList"'
}
eventually 120 "/openapi/v2 defines the v1beta1 MetricValueList" v2_has

step "4. aggregated discovery lists the group (built from plain discovery after our 406)"
# Aggregated discovery turns "<resource>/<metric>" names into subresources of "<resource>".
aggregated() {
  curl -sf --cacert "$GPUSCALE_CA_CERT" --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" \
    -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' \
    "$GPUSCALE_APISERVER_URL/apis" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["kind"] == "APIGroupDiscoveryList", doc["kind"]
groups = [g for g in doc["items"] if g["metadata"]["name"] == "custom.metrics.k8s.io"]
names = set()
for group in groups:
    for version in group["versions"]:
        for r in version.get("resources", []):
            names.add(r["resource"])
            names.update(r["resource"] + "/" + s["subresource"] for s in r.get("subresources", []))
if "poddisruptionbudgets.policy/p_total" not in names:
    sys.exit("not yet: %s" % sorted(names))'
}
eventually 90 "aggregated discovery lists poddisruptionbudgets.policy/p_total" aggregated

step "5. kube-apiserver logged no errors about our APIServices"
if grep -E '^E[0-9]{4} ' "$work/cluster/logs/kube-apiserver.log" |
  grep -iE 'custom\.metrics|external\.metrics|gpuscale-adapter'; then
  die "kube-apiserver logged errors about the adapter's APIServices (above)"
fi
echo "PASS"
