#!/usr/bin/env bash
# End-to-end check of the test control plane (tests/cluster): brings a cluster up in a temporary
# directory and verifies, with kubectl, what later tests rely on:
#   readyz; a KWOK GPU node with nvidia.com/mig-1g.5gb capacity becomes Ready; the real scheduler
#   places 7 of 9 one-slice pods and reports "Insufficient nvidia.com/mig-1g.5gb" for the rest; a
#   device-plugin style allocatable raise schedules them; an APIService backed by an ExternalName
#   Service (localhost) becomes Available and is reachable through kube-apiserver with the
#   front-proxy identity; the HPA controller evaluates an autoscaling/v2 HPA and queries the
#   custom metrics API through the aggregator.
# Exit 77 (skipped) when the binaries have not been built.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
e2e_init cluster-test
here=$src/tests/e2e/cluster
e2e_require_cluster
e2e_show_on_failure "$work/cluster/logs/*.log" "$work/backend.log"

step "start the control plane"
e2e_cluster_up

step "kubectl get --raw /readyz"
[ "$(kc get --raw /readyz)" = ok ] || die "/readyz is not ok"

step "create a KWOK-managed GPU node with 7 x nvidia.com/mig-1g.5gb"
node=kwok-gpu-0
res=nvidia.com/mig-1g.5gb
kc apply -f - <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations:
    $GPUSCALE_KWOK_NODE_ANNOTATION: "$GPUSCALE_KWOK_NODE_ANNOTATION_VALUE"
  labels:
    kubernetes.io/hostname: $node
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB
    nvidia.com/gpu.count: "1"
    nvidia.com/gpu.memory: "40960"
    nvidia.com/mig.capable: "true"
    nvidia.com/mig.strategy: mixed
    nvidia.com/mig.config: all-1g.5gb
    nvidia.com/mig.config.state: success
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", $res: "7"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", $res: "7"}
EOF
kc wait --for=condition=Ready "node/$node" --timeout=120s
no_taints() { [ -z "$(kc get node "$node" -o jsonpath='{.spec.taints}')" ]; }
eventually 120 "node-lifecycle-controller removes the not-ready taint" no_taints
jp_res="{.status.allocatable.nvidia\.com/mig-1g\.5gb}"
[ "$(kc get node "$node" -o jsonpath="$jp_res")" = 7 ] || die "allocatable is not 7"

step "a Deployment of 9 one-slice pods: 7 Running, 2 Pending (Insufficient $res)"
kc create namespace e2e
eventually 60 "default service account in e2e" kc -n e2e get serviceaccount default -o name
e2e_deployment e2e slices 9 <<EOF
      containers:
      - name: main
        image: registry.invalid/never-pulled:1
        resources:
          requests: {cpu: 10m}
          limits: {$res: "1"}
EOF
count_phase() { kc -n e2e get pods -l app=slices --field-selector="status.phase=$1" -o name | wc -l; }
phases_are() { [ "$(count_phase Running)" -eq "$1" ] && [ "$(count_phase Pending)" -eq "$2" ]; }
unschedulable_msgs() {
  kc -n e2e get pods -l app=slices --field-selector=status.phase=Pending -o \
    jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].message}{"\n"}{end}'
}
two_insufficient() { [ "$(unschedulable_msgs | grep -c "Insufficient $res")" -eq 2 ]; }
eventually 120 "7 Running and 2 Pending pods" phases_are 7 2
eventually 60 "scheduler reports Insufficient $res on both Pending pods" two_insufficient
unschedulable_msgs | sort -u

step "raise allocatable to 9 through the status subresource (as a device plugin would)"
kc patch node "$node" --subresource=status --type=merge \
  -p "{\"status\":{\"capacity\":{\"$res\":\"9\"},\"allocatable\":{\"$res\":\"9\"}}}"
[ "$(kc get node "$node" -o jsonpath="$jp_res")" = 9 ] || die "allocatable is not 9"
eventually 120 "all 9 pods Running" phases_are 9 0

step "APIService v1beta1.custom.metrics.k8s.io behind an ExternalName Service (localhost)"
# The aggregator dials https://<externalName>:<APIService port> with ServerName <svc>.<ns>.svc;
# the backend's cert carries that name and is verified against spec.caBundle.
svc=custom-metrics-test
(
  cd "$work"
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -keyout backend-ca.key \
    -out backend-ca.crt -subj "/CN=backend-test-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,digitalSignature"
  openssl req -new -newkey rsa:2048 -nodes -keyout backend.key -out backend.csr -subj "/CN=$svc"
  printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\n' \
    "$svc.kube-system.svc" >backend.ext
  openssl x509 -req -sha256 -days 1 -in backend.csr -CA backend-ca.crt -CAkey backend-ca.key \
    -CAcreateserial -out backend.crt -extfile backend.ext
) >"$work/backend-pki.log" 2>&1
e2e_spawn "$work/backend.log" python3 "$here/tls_backend.py" --cert "$work/backend.crt" \
  --key "$work/backend.key" --client-ca "$GPUSCALE_FRONT_PROXY_CA_CERT" \
  --port-file "$work/backend.port"
eventually 30 "backend listening" test -s "$work/backend.port"
backend_port=$(cat "$work/backend.port")
"$src/tests/e2e/lib/custom_metrics_apiservice.sh" "$svc" kube-system "$backend_port" \
  "$work/backend-ca.crt" | kc apply -f -
kc wait --for=condition=Available apiservice/v1beta1.custom.metrics.k8s.io --timeout=120s
body=$(kc get --raw /apis/custom.metrics.k8s.io/v1beta1)
echo "$body"
grep -q '"kind": *"APIResourceList"' <<<"$body" || die "no APIResourceList through the aggregator"
grep -q 'pods/test_metric' <<<"$body" || die "backend resources missing"
grep -q "GET /apis/custom.metrics.k8s.io/v1beta1 cn=front-proxy-client user=kubernetes-admin" \
  "$work/backend.log" || die "backend did not see the admin identity via the front proxy"

step "HPA controller evaluates an autoscaling/v2 HPA on a custom metric through the aggregator"
e2e_hpa e2e slices 1 9 test_metric 1
hpa_conditions() { [ -n "$(kc -n e2e get hpa slices -o jsonpath='{.status.conditions}')" ]; }
eventually 120 "HPA status conditions" hpa_conditions
kc -n e2e get hpa slices -o \
  jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}{"\n"}{end}'
hpa_asked() {
  grep -q "pods/%2A/test_metric.* cn=front-proxy-client user=system:serviceaccount:kube-system:horizontal-pod-autoscaler" \
    "$work/backend.log" ||
    grep -q "pods/\*/test_metric.* cn=front-proxy-client user=system:serviceaccount:kube-system:horizontal-pod-autoscaler" \
      "$work/backend.log"
}
eventually 120 "HPA controller queries the custom metrics backend" hpa_asked
grep -m1 "test_metric" "$work/backend.log"

step "clean up the APIService before teardown"
kc delete apiservice v1beta1.custom.metrics.k8s.io
echo "PASS"
