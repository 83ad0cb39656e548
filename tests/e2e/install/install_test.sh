#!/usr/bin/env bash
# The install path a user takes from a release, on the test cluster with its real node
# (tests/cluster/up.sh --real-node: kubelet, containerd, kube-proxy) and gpuscale-sim as the GPU
# Operator:
#   1. the release folder of scripts/release.sh (the one tests/integration/release made, ctest
#      fixture release_artifacts, or made here): the adapter's and reconciler's images are imported
#      from its OCI archives into the node's containerd (no registry), under the names they carry;
#   2. `kubectl apply -k` of manifests/adapter through an overlay that sets only the image, the pull
#      policy and --prometheus-url, and gives the serving certificate and its CA by the manual path
#      of docs/operations.md (RBAC, ServiceAccount, securityContext, APIServices as shipped):
#      both replicas run on the real node as gpuscale-adapter, the APIServices turn Available through
#      the aggregator, `kubectl get --raw` lists avg_time_queue_us of the Triton pods (KWOK pods on
#      the emulated GPU nodes, scraped by a real Prometheus on the node's bridge address), and a real
#      HPA reads it and scales the Deployment to its 7-slice ceiling;
#   3. `kubectl apply -k` of manifests/reconciler the same way: two replicas, one holds the Lease,
#      switched to act by components/act (the documented step), and with only the permissions of
#      manifests/reconciler/rbac.yaml and components/act/rbac.yaml the leader raises the HPA's
#      ceiling (a MIG reshape of the idle GPU); every Event it writes names the leader;
#   4. the same through Helm: the kustomize install deleted, `helm install` of the release's packaged
#      chart with the image repositories (tags: the chart's appVersion) and the Prometheus URL; the
#      APIServices carry the chart's generated CA as their caBundle (no insecureSkipTLSVerify) and
#      turn Available, the metric is served through the aggregator, and a reconciler replica of the
#      chart takes the Lease; `gpuscale-reconciler explain` run in its pod as NOTES.txt gives it
#      (`kubectl exec`, the installed policy and state) answers for the HPA;
#   5. `helm uninstall`: the chart's pre-delete hook Job (its own ServiceAccount) scales the
#      reconciler to 0, then takes gpuscale's taint, labels, annotations and state store off the
#      cluster; the hook's objects are gone afterwards.
# No component of gpuscale runs with the admin kubeconfig: a missing permission fails the test. The
# times from `kubectl apply` (and `helm install`) to the APIServices Available, to the first value
# through the aggregator and to the HPA's first reading are printed (docs/benchmarks/install.md).
# Exit 77 (skipped) when not root, when the cluster binaries (kubelet, kube-proxy), containerd, runc,
# the CNI plugins, prometheus or an image builder are missing, or another real node runs here.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
e2e_init install
here=$src/tests/e2e/install
prometheus_run=$src/tests/support/prometheus_run.sh
e2e_require_cluster
e2e_require "$bin/kubelet" "$bin/kube-proxy" "$bin/helm" "$build/bin/gpuscale-adapter" \
  "$build/bin/gpuscale-reconciler" "$sim" /usr/bin/prometheus /usr/bin/openssl
# shellcheck source=../../cluster/lib/real-node.sh
source "$cluster/lib/real-node.sh"
missing=$(rn_missing "$bin")
if [ -n "$missing" ]; then
  echo "skip: a real node needs:" $missing
  exit 77
fi
if ip link show "$rn_bridge" >/dev/null 2>&1; then
  echo "skip: bridge $rn_bridge exists (another real node runs on this machine)"
  exit 77
fi
if ! command -v buildah >/dev/null && ! command -v podman >/dev/null; then
  echo "skip: no buildah or podman to make the images"
  exit 77
fi
e2e_on_exit '"$prometheus_run" stop "$work/prometheus"'
e2e_show_on_failure "$work/images.log" "$work/sim.log" "$work/exporter.log" \
  "$work/cluster/logs/*.log" "$work/pods.log"
# On failure, what the programs' pods said.
dump_pods() {
  local p
  for p in $(kc -n gpuscale get pods -o name 2>/dev/null); do
    echo "--- $p" >>"$work/pods.log"
    kc -n gpuscale logs "$p" --tail=40 >>"$work/pods.log" 2>&1 || true
  done
  kc -n gpuscale get pods -o wide >>"$work/pods.log" 2>&1 || true
}
e2e_on_exit 'dump_pods'

version=$(cat "$src/VERSION")
release=${GPUSCALE_RELEASE_DIR:-$build/release}
if ! (cd "$release" 2>/dev/null && sha256sum --quiet -c SHA256SUMS 2>/dev/null); then
  step "the release: scripts/release.sh $version (no release folder in $release)"
  release=$work/release
  PATH=$bin:$PATH "$src/scripts/release.sh" "$version" --prebuilt "$build" --out "$release" \
    >"$work/images.log" 2>&1 || die "scripts/release.sh failed"
fi
step "the release in $release: $(cd "$release" && echo *)"

step "the control plane, the real node (the release's images imported) and gpuscale-sim as the GPU Operator"
e2e_cluster_up --real-node --scenario "$here/scenario.yaml" \
  --import "$release/gpuscale-adapter-$version.oci.tar" \
  --import "$release/gpuscale-reconciler-$version.oci.tar"
node=$GPUSCALE_REAL_NODE
kc wait --for=condition=Ready "node/$node" --timeout=120s
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
for n in gpu-a100-0 gpu-a100-1; do kc wait --for=condition=Ready "node/$n" --timeout=180s; done
# GPU nodes are kept for GPU pods, as clusters usually do; gpuscale's pods go to the real node.
kc taint node gpu-a100-0 gpu-a100-1 nvidia.com/gpu=present:NoSchedule

step "the Deployment triton on the GPU nodes, its exporter, Prometheus on the node's address"
e2e_triton_deployment
running() { kc -n default get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l; }
running_is() { [ "$(running)" -eq "$1" ]; }
eventually 180 "one Running triton pod" running_is 1
echo 400000 >"$work/queue_us"
e2e_spawn "$work/exporter.log" python3 "$src/tests/e2e/adapter_hpa/pod_exporter.py" \
  --kubectl "$bin/kubectl" --namespace default --selector app=triton \
  --queue-file "$work/queue_us" --port-file "$work/exporter.port"
eventually 60 "exporter port file" test -s "$work/exporter.port"
prom_url=$("$prometheus_run" start "$work/prometheus" --scrape "127.0.0.1:$(cat "$work/exporter.port")" \
  --interval 1s --address "$rn_gateway")

# overlay NAME: a kustomization over manifests/NAME that sets the image, Never pulls it, (for the
# adapter) points --prometheus-url at the test's Prometheus and (for the reconciler) switches it from
# observe to act with components/act. Nothing else of the base changes.
overlay() {
  local name=$1 dir=$work/overlay/$1 base patch
  mkdir -p "$dir"
  base=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
    "$src/manifests/$name" "$dir")
  patch="      - op: replace
        path: /spec/template/spec/containers/0/imagePullPolicy
        value: Never"
  if [ "$name" = adapter ]; then
    local index
    index=$(kc kustomize "$src/manifests/adapter" | python3 -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "Deployment":
        args = d["spec"]["template"]["spec"]["containers"][0]["args"]
        print(next(i for i, a in enumerate(args) if a.startswith("--prometheus-url=")))')
    patch+="
      - op: replace
        path: /spec/template/spec/containers/0/args/$index
        value: --prometheus-url=$prom_url/"
  fi
  # The reconciler ships observe-only; the on-ramp's step to act is the component of the docs
  # (--mode=act and the write grants).
  local components=""
  if [ "$name" = reconciler ]; then
    components="components:
- $base/components/act"
  fi
  cat >"$dir/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $base
$components
images:
- {name: gpuscale-$name, newName: localhost/gpuscale-$name, newTag: $version}
patches:
- target: {kind: Deployment, name: gpuscale-$name}
  patch: |
$patch
YAML
  # The adapter's serving certificate by the manual path of docs/operations.md (no cert-manager
  # here): a CA of our own, the pair in a Secret, the CA in every APIService's caBundle.
  if [ "$name" = adapter ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj /CN=gpuscale-e2e-ca -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
      -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -subj /CN=gpuscale-adapter \
      -addext subjectAltName=DNS:gpuscale-adapter.gpuscale.svc \
      -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
    cat >>"$dir/kustomization.yaml" <<'YAML'
secretGenerator:
- name: gpuscale-adapter-serving-cert
  namespace: gpuscale
  type: kubernetes.io/tls
  files: [tls.crt, tls.key, ca.crt]
  options: {disableNameSuffixHash: true}
replacements:
- source: {kind: Secret, name: gpuscale-adapter-serving-cert, fieldPath: data.ca\.crt}
  targets:
  - select: {kind: APIService}
    fieldPaths: [spec.caBundle]
    options: {create: true}
YAML
  fi
}

# on_node APP_LABEL_SELECTOR SERVICEACCOUNT: every pod of the selector runs on the real node as SA.
on_node() {
  local out
  out=$(kc -n gpuscale get pods -l "$1" \
    -o jsonpath='{range .items[*]}{.spec.nodeName} {.spec.serviceAccountName}{"\n"}{end}')
  [ -n "$out" ] || die "no pods for $1"
  if grep -v "^$node $2\$" <<<"$out"; then die "pods of $1 not on $node as $2"; fi
}

step "kubectl apply -k: the adapter as shipped (overlay: image, pull policy, Prometheus URL)"
overlay adapter
t_apply=$SECONDS
kc apply -k "$work/overlay/adapter"
kc -n gpuscale rollout status deployment/gpuscale-adapter --timeout=300s
on_node app.kubernetes.io/name=gpuscale-adapter gpuscale-adapter
for api in v1beta1.custom.metrics.k8s.io v1beta2.custom.metrics.k8s.io \
  v1beta1.external.metrics.k8s.io; do
  kc wait --for=condition=Available "apiservice/$api" --timeout=300s
done
t_available=$((SECONDS - t_apply))
step "APIServices Available ${t_available} s after kubectl apply"

metric_path() { echo "/apis/custom.metrics.k8s.io/$1/namespaces/default/pods/%2A/avg_time_queue_us"; }
has_value() {
  kc get --raw "$(metric_path v1beta2)" 2>/dev/null | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
sys.exit(0 if items and all(float(i["value"].rstrip("m")) > 0 for i in items) else 1)' 2>/dev/null
}
eventually 300 "avg_time_queue_us through the aggregator" has_value
t_value=$((SECONDS - t_apply))
kc get --raw "$(metric_path v1beta1)"
echo
step "the first value through the aggregator ${t_value} s after kubectl apply"

step "a real HPA reads avg_time_queue_us and scales triton to the 7 slices"
e2e_triton_hpa inference
hpa_reads() {
  [ -n "$(kc -n default get hpa triton -o jsonpath='{.status.currentMetrics[0].pods.current.averageValue}')" ]
}
eventually 300 "the HPA's first reading of avg_time_queue_us" hpa_reads
t_hpa=$((SECONDS - t_apply))
step "the HPA's first reading ${t_hpa} s after kubectl apply"
eventually 300 "7 Running triton pods" running_is 7

step "kubectl apply -k: the reconciler as shipped (overlay: image, pull policy), two replicas"
overlay reconciler
kc apply -k "$work/overlay/reconciler"
kc -n gpuscale rollout status deployment/gpuscale-reconciler --timeout=300s
on_node app=gpuscale-reconciler gpuscale-reconciler
pods=$(kc -n gpuscale get pods -l app=gpuscale-reconciler -o jsonpath='{.items[*].metadata.name}')
[ "$(wc -w <<<"$pods")" -eq 2 ] || die "want 2 reconciler pods, got: $pods"
holder() { kc -n gpuscale get lease gpuscale-reconciler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
held_by_a_pod() { local h; h=$(holder) && [ -n "$h" ] && grep -qw -- "$h" <<<"$pods"; }
held_by_chart_pod() {
  pods=$(kc -n gpuscale get pods -l app=gpuscale-reconciler -o jsonpath='{.items[*].metadata.name}')
  held_by_a_pod
}
eventually 120 "one reconciler pod holds the Lease" held_by_a_pod
leader=$(holder)
step "leader: $leader"

step "at the ceiling, the leader (the shipped RBAC of act mode only) raises maxReplicas"
max_above_7() { [ "$(kc -n default get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt 7 ]; }
eventually 600 "maxReplicas raised above 7" max_above_7
kc -n default get hpa triton
instances=$(kc get events -A -o jsonpath='{range .items[?(@.reportingComponent=="gpuscale.io/reconciler")]}{.reportingInstance}{"\n"}{end}' | sort -u)
[ -n "$instances" ] || die "no Events of gpuscale-reconciler"
[ "$instances" = "$leader" ] || die "Events by $(tr '\n' ' ' <<<"$instances"), leader $leader"
# The chart's NOTES.txt lists them this way.
selected=$(kc get events -A --field-selector source=gpuscale-reconciler -o name)
[ -n "$selected" ] || die "no Event selected by source=gpuscale-reconciler"

helm_() { HELM_CACHE_HOME=$work/helm HELM_CONFIG_HOME=$work/helm HELM_DATA_HOME=$work/helm "$bin/helm" "$@"; }

step "the kustomize install removed; helm install of the release's chart (default TLS: generated CA)"
# The adapter first and without waiting: both bases own the namespace, and its deletion stalls
# while APIServices point at a Service that is going away (kube-apiserver cannot discover them).
kc delete -k "$work/overlay/adapter" --ignore-not-found --wait=false >/dev/null
kc delete -k "$work/overlay/reconciler" --ignore-not-found --wait=false >/dev/null
gone() { ! kc get namespace gpuscale >/dev/null 2>&1; }
eventually 300 "namespace gpuscale deleted" gone
t_helm=$SECONDS
helm_ install gpuscale "$release/gpuscale-$version.tgz" --namespace gpuscale --create-namespace \
  --set adapter.image.repository=localhost/gpuscale-adapter --set adapter.image.pullPolicy=Never \
  --set reconciler.image.repository=localhost/gpuscale-reconciler \
  --set reconciler.image.pullPolicy=Never --set reconciler.mode=act \
  --set adapter.prometheus.url="$prom_url/" --wait --timeout 5m
on_node app.kubernetes.io/name=gpuscale-adapter gpuscale-adapter
on_node app=gpuscale-reconciler gpuscale-reconciler
for program in adapter reconciler; do
  image=$(kc -n gpuscale get deployment "gpuscale-$program" -o jsonpath='{.spec.template.spec.containers[0].image}')
  [ "$image" = "localhost/gpuscale-$program:$version" ] ||
    die "the chart's $program image is $image, not the release's tag (appVersion $version)"
done
ca_bundle=$(kc get apiservice v1beta2.custom.metrics.k8s.io -o jsonpath='{.spec.caBundle}')
[ -n "$ca_bundle" ] || die "the chart's APIService has no caBundle"
[ -z "$(kc get apiservice v1beta2.custom.metrics.k8s.io -o jsonpath='{.spec.insecureSkipTLSVerify}')" ] ||
  die "the chart's APIService skips verification"
for api in v1beta1.custom.metrics.k8s.io v1beta2.custom.metrics.k8s.io \
  v1beta1.external.metrics.k8s.io; do
  kc wait --for=condition=Available "apiservice/$api" --timeout=300s
done
t_helm_available=$((SECONDS - t_helm))
eventually 300 "avg_time_queue_us through the aggregator (verified with the chart's CA)" has_value
t_helm_value=$((SECONDS - t_helm))
eventually 120 "a reconciler pod of the chart holds the Lease" held_by_chart_pod
step "helm install: Available ${t_helm_available} s, first value ${t_helm_value} s (kubectl apply: \
Available ${t_available} s, first value ${t_value} s, HPA reading ${t_hpa} s)"

step "explain in the cluster, as NOTES.txt gives it: the installed policy and state"
explain_cmd=$(helm_ get notes gpuscale --namespace gpuscale | grep -m1 "gpuscale-reconciler explain" |
  sed 's/^ *//')
[ -n "$explain_cmd" ] || die "NOTES.txt gives no explain command"
why=$(eval "kc ${explain_cmd#kubectl } default/triton" 2>&1) || die "in-cluster explain failed: $why"
echo "$why" | head -n 12
grep -q "default/triton" <<<"$why" || die "in-cluster explain does not name the HPA: $why"

step "helm uninstall: the chart's pre-delete hook stops the reconciler and takes its traces off"
traces gpuscale keep | sed 's/^/  before: /'
[ -n "$(traces gpuscale keep)" ] || die "the acting reconciler left nothing for the hook to clean"
helm_ uninstall gpuscale --namespace gpuscale --wait --timeout 5m ||
  die "helm uninstall failed (the cleanup hook's Job and its log are kept in namespace gpuscale)"
# Without uninstallCleanup.restoreStockConfigs the nodes keep the MIG config they run.
no_traces gpuscale keep || die "helm uninstall left traces of gpuscale"
[ -z "$(kc get clusterrole,clusterrolebinding -o name | grep gpuscale-reconciler-cleanup)" ] ||
  die "the hook's RBAC outlived it"
step "helm uninstall: no trace of gpuscale on nodes and HPAs"
