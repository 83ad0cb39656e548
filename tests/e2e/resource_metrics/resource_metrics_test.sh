#!/usr/bin/env bash
# metrics.k8s.io from gpuscale-adapter in place of metrics-server, behind the real aggregator:
#   tests/cluster/up.sh -> a KWOK node `worker-0` (4 CPUs, 8 GiB allocatable) and a Deployment `web`
#   (2 replicas, containers app and sidecar) in default -> usage_exporter.py serves cAdvisor- and
#   kubelet-style usage for its Running pods (0.25 cores and 64 MiB per container; the node 1.5
#   cores and 2 GiB) -> a real Prometheus scrapes it -> gpuscale-adapter in in-cluster mode
#   (delegated authentication and authorization, pods and nodes LISTed from the API; RBAC from
#   manifests/adapter and its resource-metrics component) serving rules.yaml's resourceRules,
#   registered as v1beta1.metrics.k8s.io through an ExternalName Service. Checks:
#   1. the APIService turns Available and discovery lists metrics.k8s.io/v1beta1 pods and nodes;
#   2. `kubectl get --raw .../namespaces/default/pods` through kube-apiserver lists exactly the
#      Running pods, each with both containers, memory "64Mi", the pods' labels and window "10s";
#   3. `kubectl top pod` (also -l, --containers and -A) and `kubectl top node` print the usage
#      (250m/64Mi per container, 500m/128Mi per pod; 1500m/2048Mi and 37%/25% for the node);
#   3b. `kubectl explain pods|nodes --api-version=metrics.k8s.io/v1beta1` finds PodMetrics and
#      NodeMetrics in kube-apiserver's aggregated OpenAPI (served by the adapter);
#   4. an autoscaling/v2 HPA of type Resource (cpu utilization) reads them: about 83 %;
#   5. a pod that no longer runs disappears from the list (scaled to 1 replica);
#   6. Prometheus stopped: the aggregator relays the adapter's 503 (never an empty or zero list).
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter or prometheus are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../lib/adapter_stack.sh
source "$(dirname "$0")/../lib/adapter_stack.sh"
adapter_e2e_begin resource-metrics /usr/bin/openssl /usr/bin/python3
e2e_show_on_failure "$work/adapter.log" "$work/exporter.log" "$work/prometheus/prometheus.log"

step "start the control plane and a KWOK node worker-0"
e2e_cluster_up
kc apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: worker-0
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: worker-0, type: kwok}
YAML
kc wait --for=condition=Ready node/worker-0 --timeout=180s >/dev/null
# KWOK's node initialisation writes the status too: set the resources until they stick.
node_resources() {
  kc patch node worker-0 --subresource=status --type=merge -p \
    '{"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}' \
    >/dev/null
  sleep 1
  [ "$(node_allocatable worker-0 cpu)" = 4 ] && [ "$(node_allocatable worker-0 memory)" = 8Gi ]
}
eventually 60 "worker-0 allocatable 4 CPUs and 8Gi" node_resources

step "the Deployment web (2 replicas, containers app and sidecar) in default"
kc apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      nodeSelector: {type: kwok}
      containers:
      - {name: app, image: registry.invalid/web:never-pulled, resources: {requests: {cpu: 500m, memory: 128Mi}}}
      - {name: sidecar, image: registry.invalid/sidecar:never-pulled, resources: {requests: {cpu: 100m, memory: 64Mi}}}
YAML
running_pods() { kc -n default get pods -l app=web --field-selector=status.phase=Running \
  -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
running_is() { [ "$(running_pods | grep -c .)" -eq "$1" ]; }
eventually 180 "two Running web pods" running_is 2

step "the usage exporter and Prometheus"
e2e_spawn "$work/exporter.log" python3 "$here/usage_exporter.py" --kubectl "$bin/kubectl" \
  --namespace default --selector app=web --node worker-0 --port-file "$work/exporter.port"
eventually 60 "exporter port file" test -s "$work/exporter.port"
prom_url=$("$prometheus_run" start "$work/prometheus" --scrape "127.0.0.1:$(cat "$work/exporter.port")" \
  --interval 1s)

step "the adapter (in-cluster mode, resourceRules) registered as v1beta1.metrics.k8s.io"
adapter_stack_init "$work" "$adapter" "$here/rules.yaml"
adapter_stack_identity
kc apply -f "$src/manifests/adapter/components/resource-metrics/rbac.yaml" >/dev/null
adapter_stack_certificate
adapter_stack_start "$prom_url"
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: gpuscale-adapter, namespace: gpuscale}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {name: gpuscale-adapter, namespace: gpuscale, port: $ADAPTER_PORT}
  caBundle: $(base64 -w0 <"$work/tls/ca.crt")
  groupPriorityMinimum: 100
  versionPriority: 100
YAML
available() {
  [ "$(kc get apiservice v1beta1.metrics.k8s.io \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ]
}
eventually 180 "APIService v1beta1.metrics.k8s.io Available" available
kc get --raw /apis/metrics.k8s.io/v1beta1 | grep -q '"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":\["get","list"\]' \
  || die "discovery of metrics.k8s.io/v1beta1 lacks pods"

step "PodMetrics through kube-apiserver: every Running pod, both containers, the pods' labels"
# "pod container cpu memory window labels" lines of the list, through kube-apiserver.
pod_lines() {
  kc get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods 2>/dev/null | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["kind"] == "PodMetricsList", doc
for i in doc["items"]:
    labels = ",".join("%s=%s" % kv for kv in sorted(i["metadata"].get("labels", {}).items()) if kv[0] != "pod-template-hash")
    for c in i["containers"]:
        print(i["metadata"]["name"], c["name"], c["usage"]["cpu"], c["usage"]["memory"], i["window"], labels)'
}
# Every Running pod with app and sidecar at ~250m (the rate covers its 10 s range) and 64Mi.
pods_served() {
  local got
  got=$(pod_lines) || return 1
  [ "$(awk '{print $1}' <<<"$got" | sort -u)" = "$(running_pods)" ] || return 1
  python3 - "$got" <<'PY'
import sys
def cores(q):
    scale = {"n": 1e-9, "u": 1e-6, "m": 1e-3}.get(q[-1])
    return float(q[:-1]) * scale if scale else float(q)
rows = [line.split() for line in sys.argv[1].splitlines()]
ok = len(rows) == 4 and sorted(set(r[1] for r in rows)) == ["app", "sidecar"]
ok = ok and all(abs(cores(r[2]) - 0.25) < 0.03 and r[3] == "64Mi" and r[4] == "10s"
                and r[5] == "app=web,tier=front" for r in rows)
sys.exit(0 if ok else 1)
PY
}
eventually 120 "PodMetrics for both Running pods" pods_served
pod_lines

step "kubectl top pod and kubectl top node"
# kubectl prints millicores and MiB; the measured rate may be a millicore or two off.
top_pod_ok() {
  local out
  out=$(kc top pod -n default "$@" 2>&1) || return 1
  echo "$out" >"$work/top"
  python3 - "$work/top" "$(running_pods | tr '\n' ' ')" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
pods = sys.argv[2].split()
rows = {l.split()[0]: l.split() for l in lines[1:] if l.strip()}
ok = lines[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"] and sorted(rows) == sorted(pods)
ok = ok and all(abs(int(r[1].rstrip("m")) - 500) <= 20 and r[2] == "128Mi" for r in rows.values())
sys.exit(0 if ok else 1)
PY
}
eventually 60 "kubectl top pod: 500m / 128Mi per pod" top_pod_ok
cat "$work/top"
eventually 30 "kubectl top pod -l app=web" top_pod_ok -l app=web
[ "$(kc top pod -n default -l app=nothing 2>&1)" = "No resources found in default namespace." ] \
  || die "a selector without pods should print no resources: $(kc top pod -n default -l app=nothing 2>&1)"
kc top pod -n default --containers | tee "$work/top-containers"
[ "$(grep -c ' app \| sidecar ' "$work/top-containers")" -eq 4 ] \
  || die "kubectl top pod --containers should print 4 containers"
# The output is read whole first: `kubectl | grep -q` fails under pipefail when grep stops early.
top_all=$(kc top pod -A)
grep -q "^default  *web-" <<<"$top_all" || die "kubectl top pod -A lacks the web pods: $top_all"
top_node_ok() {
  local out
  out=$(kc top node 2>&1) || return 1
  echo "$out" >"$work/top-node"
  python3 - "$work/top-node" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
rows = [l.split() for l in lines[1:] if l.strip()]
ok = lines[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
ok = ok and len(rows) == 1 and rows[0][0] == "worker-0"
ok = ok and abs(int(rows[0][1].rstrip("m")) - 1500) <= 40 and rows[0][2] in ("37%", "38%")
ok = ok and rows[0][3] == "2048Mi" and rows[0][4] == "25%"
sys.exit(0 if ok else 1)
PY
}
eventually 60 "kubectl top node: worker-0 at 1500m (37%) and 2048Mi (25%)" top_node_ok
cat "$work/top-node"
kc top node worker-0 >/dev/null || die "kubectl top node worker-0 failed"

step "OpenAPI: kubectl explain reads PodMetrics and NodeMetrics from the aggregated spec"
explains() { # resource kind field
  local out
  out=$(kc explain "$1" --api-version=metrics.k8s.io/v1beta1 2>&1) || return 1
  echo "$out" >"$work/explain"
  [[ $out == *"KIND:"*"$2"* && $out == *"$3"* ]]
}
eventually 60 "kubectl explain pods (metrics.k8s.io): PodMetrics with containers" \
  explains pods PodMetrics containers
eventually 30 "kubectl explain nodes (metrics.k8s.io): NodeMetrics with usage" \
  explains nodes NodeMetrics usage

step "an autoscaling/v2 HPA of type Resource reads the pods' cpu through the aggregator"
# 500m used of 600m requested per pod: 83 % (min = max = 2, so it measures without scaling).
e2e_hpa default web 2 2 >/dev/null <<'YAML'
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
YAML
hpa_utilization() {
  local got
  got=$(kc -n default get hpa web \
    -o jsonpath='{.status.currentMetrics[0].resource.current.averageUtilization}')
  [ -n "$got" ] && [ "$got" -ge 80 ] && [ "$got" -le 86 ]
}
eventually 120 "the HPA reports about 83 % cpu utilization" hpa_utilization
kc -n default get hpa web
kc -n default delete hpa web >/dev/null

step "a pod that stops running is no longer listed"
kc -n default scale deployment web --replicas=1 >/dev/null
eventually 120 "one Running web pod" running_is 1
one_listed() { [ "$(pod_lines | awk '{print $1}' | sort -u)" = "$(running_pods)" ]; }
eventually 60 "PodMetrics for the one remaining pod" one_listed

step "Prometheus stopped: the aggregator relays the adapter's 503, no made-up list"
"$prometheus_run" stop "$work/prometheus"
failing() {
  local out
  out=$(kc get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods 2>&1) && return 1
  grep -q "unable to fetch metrics" <<<"$out" || grep -q "ServiceUnavailable\|503" <<<"$out"
}
eventually 60 "metrics.k8s.io fails while Prometheus is down" failing
kc top pod -n default >/dev/null 2>&1 && die "kubectl top pod should fail while Prometheus is down"
echo "resource metrics e2e passed"
