#!/usr/bin/env bash
# End-to-end check of the test cluster's real node (tests/cluster/up.sh --real-node): brings a
# cluster up with it and verifies, with kubectl:
#   the Node is Ready and runs the control plane's Kubernetes version; a pod from an image imported
#   from a docker-archive (debian:bookworm-slim, no registry) runs on it; kubectl logs and exec work
#   (kube-apiserver -> kubelet authentication and authorization); the pod reaches kube-apiserver
#   through the ClusterIP of the kubernetes Service (kube-proxy's iptables rules); gpuscale-sim's
#   image, run in a pod with its in-cluster configuration, creates its scenario's GPU Node through
#   that Service; after down.sh no bridge, iptables chain, mount, cgroup or process is left.
# Exit 77 (skipped) when not root, when the cluster binaries, containerd/runc/CNI plugins or an
# image builder are missing, or when another real node runs on this machine (up.sh exits 5).
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
e2e_init real-node-test
e2e_require_cluster
e2e_require "$bin/kubelet" "$bin/kube-proxy" "$build/bin/gpuscale-sim"
# shellcheck source=../../cluster/lib/real-node.sh
source "$cluster/lib/real-node.sh"
missing=$(rn_missing "$bin")
if [ -n "$missing" ]; then
  echo "skip: a real node needs: ${missing//$'\n'/, }"
  exit 77
fi
if ! command -v buildah >/dev/null && ! command -v podman >/dev/null; then
  echo "skip: no buildah or podman to make the images"
  exit 77
fi
e2e_show_on_failure "$work/cluster/logs/*.log" "$work/images.log"

step "images as docker-archives: gpuscale-sim (prebuilt) and debian:bookworm-slim"
mkdir -p "$work/images"
"$src/scripts/build-images.sh" --prebuilt "$build" --programs sim --tag e2e \
  --save "$work/images" >"$work/images.log" 2>&1 || die "build-images.sh failed"
base=docker.io/library/debian:bookworm-slim
if command -v buildah >/dev/null; then
  buildah push "$base" "docker-archive:$work/images/debian.tar:$base" >>"$work/images.log" 2>&1
else
  podman save --format docker-archive -o "$work/images/debian.tar" "$base" >>"$work/images.log" 2>&1
fi

step "start the control plane with the real node"
t0=$SECONDS
rc=0
"$cluster/up.sh" "$work/cluster" --real-node --import "$work/images/debian.tar" \
  --import "$work/images/gpuscale-sim.tar" || rc=$?
if [ $rc -eq 5 ]; then
  echo "skip: another real node runs on this machine (bridge $rn_bridge exists)"
  exit 77
fi
[ $rc -eq 0 ] || die "up.sh --real-node failed ($rc)"
# shellcheck disable=SC1091
source "$work/cluster/env"
export KUBECTL=$bin/kubectl
node=$GPUSCALE_REAL_NODE
step "cluster with a Ready real node after $((SECONDS - t0)) s"

step "Node $node: Ready, same version as kube-apiserver, untainted"
kc wait --for=condition=Ready "node/$node" --timeout=60s
server_version=$(kc version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
kubelet_version=$(kc get node "$node" -o jsonpath='{.status.nodeInfo.kubeletVersion}')
[ "$kubelet_version" = "$server_version" ] ||
  die "kubelet $kubelet_version, kube-apiserver $server_version"
no_taints() { [ -z "$(kc get node "$node" -o jsonpath='{.spec.taints}')" ]; }
eventually 60 "the not-ready taint is removed" no_taints

step "a debian:bookworm-slim pod (imported image, no registry) runs on the node"
kc create namespace e2e
eventually 60 "default service account in e2e" kc -n e2e get serviceaccount default -o name
kc -n e2e apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: shell}
spec:
  nodeSelector: {gpuscale.dev/real-node: "true"}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: $base
    imagePullPolicy: Never
    command: [bash, -c, 'echo hello from the real node; exec sleep infinity']
EOF
kc -n e2e wait --for=condition=Ready pod/shell --timeout=120s
[ "$(kc -n e2e get pod shell -o jsonpath='{.spec.nodeName}')" = "$node" ] || die "not on $node"

step "kubectl logs and exec (kube-apiserver -> kubelet)"
logs_ok() { kc -n e2e logs shell | grep -qx "hello from the real node"; }
eventually 30 "the pod's log line" logs_ok
[ "$(kc -n e2e exec shell -- cat /etc/debian_version | cut -d. -f1)" = 12 ] || die "exec failed"

step "the pod reaches kube-apiserver through the kubernetes Service's ClusterIP"
cluster_ip=$(kc -n default get service kubernetes -o jsonpath='{.spec.clusterIP}')
pod_env=$(kc -n e2e exec shell -- printenv KUBERNETES_SERVICE_HOST)
[ "$pod_env" = "$cluster_ip" ] || die "KUBERNETES_SERVICE_HOST=$pod_env, ClusterIP $cluster_ip"
# Plain HTTP to the TLS port: Go's TLS server answers this (and nothing else on the path would).
probe="exec 3<>/dev/tcp/$cluster_ip/443 && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && timeout 5 cat <&3"
reply() { kc -n e2e exec shell -- bash -c "$probe" 2>/dev/null | grep -q "HTTP request to an HTTPS server"; }
eventually 30 "an answer of kube-apiserver at $cluster_ip:443" reply

step "gpuscale-sim in a pod (in-cluster config via the kubernetes Service) creates its GPU Node"
kc -n e2e create serviceaccount sim
kc create clusterrolebinding e2e-sim --clusterrole=cluster-admin --serviceaccount=e2e:sim
kc -n e2e create configmap scenario --from-file=scenario.yaml=/dev/stdin <<'EOF'
name: real-node-e2e
description: one A100 at all-1g.5gb, made by a simulator that runs in a pod
nodes:
- name: gpu-in-cluster-0
  product: NVIDIA-A100-SXM4-40GB
  gpus: 1
  memoryMiB: 40960
  migStrategy: mixed
  migConfig: all-1g.5gb
EOF
kc -n e2e apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: sim}
spec:
  nodeSelector: {gpuscale.dev/real-node: "true"}
  serviceAccountName: sim
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: localhost/gpuscale-sim:e2e
    imagePullPolicy: Never
    args: [run, --scenario, /scenario/scenario.yaml, --listen, "127.0.0.1:8080"]
    volumeMounts: [{name: scenario, mountPath: /scenario}]
  volumes: [{name: scenario, configMap: {name: scenario}}]
EOF
kc -n e2e wait --for=condition=Ready pod/sim --timeout=120s
eventually 60 "Node gpu-in-cluster-0 made by the in-cluster simulator" \
  kc get node gpu-in-cluster-0 -o name

step "down.sh removes the node's bridge, iptables chains, mounts, cgroups and processes"
"$cluster/down.sh" "$work/cluster"
! ip link show "$rn_bridge" >/dev/null 2>&1 || die "bridge $rn_bridge left"
[ "$(iptables-save | grep -c KUBE || true)" -eq 0 ] || die "KUBE iptables rules left"
! grep -qF "$work/cluster" /proc/mounts || die "mounts under the cluster directory left"
cg=$(rn_cgroup_name "$work/cluster")
for m in $(rn_cgroup_mounts); do [ ! -d "$m/$cg" ] || die "cgroup $m/$cg left"; done
! pgrep -f -- "$work/cluster" >/dev/null || die "processes left"
step "done after $SECONDS s"
