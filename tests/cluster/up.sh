#!/usr/bin/env bash
# Starts a real local Kubernetes control plane as ordinary processes on 127.0.0.1:
# etcd -> kube-apiserver (RBAC, aggregation, front-proxy PKI) -> kube-controller-manager ->
# kube-scheduler -> kwok (fake nodes and pod lifecycles). Ports are picked free at run time.
#
# Usage: up.sh DIR [--scenario FILE] [--real-node [--import IMAGE.tar]...]
# Writes DIR/kubeconfig (admin), DIR/env (sourceable: ports, paths), DIR/pki, DIR/logs, DIR/run/*.pid
# and returns once the cluster is ready. Stop it with down.sh DIR (also called here on failure).
# Binaries come from $GPUSCALE_CLUSTER_BIN (default tests/cluster/bin, made by build.sh).
#
# --real-node (root only; see lib/real-node.sh) adds one Node, gpuscale-node-0 (label
# gpuscale.dev/real-node=true), run by the real kubelet on containerd + runc, with kube-proxy in
# iptables mode so that Service IPs (also kubernetes.default) work from its pods. kube-apiserver then
# binds to and advertises the node's bridge address (10.203.0.1) instead of 127.0.0.1, so the
# kubeconfigs point there. There is no registry: --import loads a docker-archive or OCI archive into
# the node's containerd (name it exactly in pod specs, with imagePullPolicy Never or IfNotPresent);
# later imports: ctr --address "$GPUSCALE_CONTAINERD_ADDRESS" -n k8s.io images import FILE.
# Exits 4 when this machine lacks what a real node needs (the message lists it), 5 when another
# real node runs on it (one per machine).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

# Free ports are picked before the components bind them; if another process takes one in between,
# the attempt exits with 75 and the whole start is retried with new ports.
if [ -z "${GPUSCALE_UP_ATTEMPT:-}" ]; then
  for attempt in 1 2 3; do
    rc=0
    GPUSCALE_UP_ATTEMPT=$attempt "$0" "$@" || rc=$?
    [ $rc -eq 75 ] || exit $rc
    echo "up: a port was taken before it was bound; retrying with new ports" >&2
  done
  exit 1
fi
usage() {
  echo "usage: $0 DIR [--scenario FILE] [--real-node [--import IMAGE.tar]...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
mkdir -p "$1"
dir=$(cd "$1" && pwd)
shift
scenario=
real_node=
rn_images=()
while [ $# -gt 0 ]; do
  case $1 in
    --real-node)
      real_node=1
      shift
      ;;
    --import)
      [ $# -ge 2 ] || usage
      [ -f "$2" ] || {
        echo "up: --import $2: no such file" >&2
        exit 2
      }
      rn_images+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")")
      shift 2
      ;;
    --scenario)
      [ $# -ge 2 ] || usage
      scenario=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
      shift 2
      ;;
    *) usage ;;
  esac
done

bin=$(cd "${GPUSCALE_CLUSTER_BIN:-$here/bin}" 2>/dev/null && pwd -P) || {
  echo "up: no binaries; run tests/cluster/build.sh first" >&2
  exit 3
}
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
  [ -x "$bin/$b" ] || {
    echo "up: $bin/$b missing; run tests/cluster/build.sh" >&2
    exit 3
  }
done
for f in "$dir"/run/*.pid; do
  [ -e "$f" ] || continue
  p=$(cat "$f")
  if [ -r "/proc/$p/cmdline" ] && tr '\0' ' ' <"/proc/$p/cmdline" | grep -qF -- "$dir"; then
    echo "up: $dir already has a running cluster (run down.sh first)" >&2
    exit 1
  fi
done
rm -f "$dir"/run/*.pid
if [ -n "$real_node" ]; then
  # shellcheck source=lib/real-node.sh
  source "$here/lib/real-node.sh"
  missing=$(rn_missing "$bin")
  if [ -n "$missing" ]; then
    echo "up: --real-node needs: ${missing//$'\n'/, }" >&2
    exit 4
  fi
fi

pki=$dir/pki logs=$dir/logs run=$dir/run
# A cluster always starts empty: state from an earlier run in DIR is discarded.
rm -rf "$dir/etcd"
mkdir -p "$pki" "$logs" "$run" "$dir/etcd"
: >"$run/order"

# Overridable timing knobs for tests that want faster or slower HPA behaviour.
hpa_sync=${GPUSCALE_HPA_SYNC_PERIOD:-5s}
hpa_down=${GPUSCALE_HPA_DOWNSCALE_STABILIZATION:-30s}
ready_timeout=${GPUSCALE_CLUSTER_READY_TIMEOUT:-180}
# Extra flags appended per component (whitespace-separated; later flags override earlier ones).
read -r -a kas_extra <<<"${GPUSCALE_KUBE_APISERVER_EXTRA_ARGS:-}"
read -r -a kcm_extra <<<"${GPUSCALE_KUBE_CONTROLLER_MANAGER_EXTRA_ARGS:-}"
read -r -a sched_extra <<<"${GPUSCALE_KUBE_SCHEDULER_EXTRA_ARGS:-}"
node_annotation=kwok.x-k8s.io/node
node_annotation_value=fake

fail() { # message [exit code]
  echo "up: $1" >&2
  "$here/down.sh" "$dir" >/dev/null 2>&1 || true
  exit "${2:-1}"
}
trap 'fail "interrupted"' INT TERM

# --- free ports: bind them all at once so they are distinct, then release -----------------------
read -r etcd_port etcd_peer_port kas_port kcm_port sched_port kwok_port \
  kubelet_port kubelet_healthz_port proxy_healthz_port proxy_metrics_port < <(
  python3 - <<'EOF'
import socket
socks = []
for _ in range(10):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)
kas_address=127.0.0.1
if [ -n "$real_node" ]; then
  # Pods reach kube-apiserver through the kubernetes Service, whose endpoint is the advertise
  # address; it must be an address on the pods' bridge, and kube-apiserver binds only one.
  kas_address=$rn_gateway
  rn_network_up
fi
server=https://$kas_address:$kas_port

# --- PKI ------------------------------------------------------------------------------------------
pki_node=()
[ -z "$real_node" ] || pki_node=("$rn_node_name" "$rn_gateway")
"$here/lib/pki.sh" "$pki" "${pki_node[@]}" >"$logs/pki.log" 2>&1 ||
  fail "certificate generation failed, see $logs/pki.log"

kubeconfig() { # file user-cert-basename
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gpuscale-test
  cluster:
    server: $server
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: gpuscale-test
  context: {cluster: gpuscale-test, user: $2}
current-context: gpuscale-test
EOF
}
kubeconfig "$dir/kubeconfig" admin
kubeconfig "$pki/kube-controller-manager.kubeconfig" kube-controller-manager
kubeconfig "$pki/kube-scheduler.kubeconfig" kube-scheduler

# --- process handling -----------------------------------------------------------------------------
start() { # name binary args...
  local name=$1 exe=$2
  shift 2
  setsid "$exe" "$@" >"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
  echo "$name" >>"$run/order"
}

alive() { kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }

wait_for() { # name description command...
  local name=$1 what=$2 deadline=$((SECONDS + ready_timeout))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name"; then
      if grep -q "address already in use" "$logs/$name.log"; then
        fail "$name: port taken (log: $logs/$name.log)" 75
      fi
      tail -n 20 "$logs/$name.log" >&2
      fail "$name exited while waiting for $what (log: $logs/$name.log)"
    fi
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what (log: $logs/$name.log)"
    sleep 0.5
  done
}

https_ok() { # url [client cert basename]
  local auth=()
  [ -z "${2:-}" ] || auth=(--cert "$pki/$2.crt" --key "$pki/$2.key")
  curl -sf --max-time 5 --cacert "$pki/ca.crt" "${auth[@]}" "$1"
}
insecure_ok() { curl -skf --max-time 5 "$1"; }
kc() { "$bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }

# --- etcd -----------------------------------------------------------------------------------------
start etcd "$bin/etcd" \
  --name=node0 --data-dir="$dir/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_port" \
  --advertise-client-urls="http://127.0.0.1:$etcd_port" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster="node0=http://127.0.0.1:$etcd_peer_port" \
  --listen-metrics-urls= \
  --unsafe-no-fsync=true --quota-backend-bytes=2147483648 --auto-compaction-retention=1 \
  --log-level=warn
wait_for etcd "etcd health" curl -sf --max-time 5 "http://127.0.0.1:$etcd_port/health"

# --- kube-apiserver -------------------------------------------------------------------------------
# A loopback advertise address would be written into the `kubernetes` Endpoints, which rejects
# loopback IPs; with the endpoint reconciler off nothing writes them, and the apiserver does not
# need a default route to pick an address. With a real node, the bridge address is advertised and
# the kubernetes Service's EndpointSlice is written once below (one kube-apiserver at a fixed
# address needs no lease reconciler); the Node authorizer and NodeRestriction admit the kubelet, and
# kube-apiserver calls the kubelet (logs, exec) with its own client cert, checking the kubelet's.
kas_mode=(--authorization-mode=RBAC)
if [ -n "$real_node" ]; then
  # shellcheck disable=SC2054  # the comma belongs to the flag's value
  kas_mode=(--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt"
    --kubelet-client-key="$pki/apiserver-kubelet-client.key"
    --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP)
fi
start kube-apiserver "$bin/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address="$kas_address" --secure-port="$kas_port" \
  --advertise-address="$kas_address" --endpoint-reconciler-type=none \
  --cert-dir="$pki/kube-apiserver" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" \
  "${kas_mode[@]}" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" \
  --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --allow-privileged=true \
  --requestheader-client-ca-file="$pki/front-proxy-ca.crt" \
  --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User \
  --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$pki/front-proxy-client.crt" \
  --proxy-client-key-file="$pki/front-proxy-client.key" \
  --enable-aggregator-routing=false \
  "${kas_extra[@]}"
wait_for kube-apiserver "kube-apiserver /readyz" https_ok "$server/readyz" admin

# --- kube-controller-manager ----------------------------------------------------------------------
# Each controller acts as its own service account with the bootstrap RBAC roles, as in kubeadm
# clusters (the HPA controller's custom-metrics calls then carry its real identity).
controllers=serviceaccount-token-controller,serviceaccount-controller,namespace-controller
controllers+=,garbage-collector-controller,deployment-controller,replicaset-controller
controllers+=,horizontal-pod-autoscaler-controller,node-lifecycle-controller
controllers+=,pod-garbage-collector-controller,root-ca-certificate-publisher-controller
controllers+=,clusterrole-aggregation-controller
# Jobs: the chart's uninstall hook runs one.
controllers+=,job-controller
# ResourceClaims from the ResourceClaimTemplates of pods (DRA), removed with their pods.
controllers+=,resourceclaim-controller
# Endpoints and EndpointSlices of Services: kube-proxy (real node) and the aggregator's
# availability check of APIServices backed by pods need them.
controllers+=,endpoints-controller,endpointslice-controller
start kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig="$pki/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig="$pki/kube-controller-manager.kubeconfig" \
  --authorization-kubeconfig="$pki/kube-controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$kcm_port" \
  --leader-elect=false \
  --use-service-account-credentials=true \
  --controllers="$controllers" \
  --service-account-private-key-file="$pki/sa.key" \
  --root-ca-file="$pki/ca.crt" \
  --horizontal-pod-autoscaler-sync-period="$hpa_sync" \
  --horizontal-pod-autoscaler-downscale-stabilization="$hpa_down" \
  --node-monitor-period=5s --node-monitor-grace-period=2m \
  "${kcm_extra[@]}"

# --- kube-scheduler -------------------------------------------------------------------------------
start kube-scheduler "$bin/kube-scheduler" \
  --kubeconfig="$pki/kube-scheduler.kubeconfig" \
  --authentication-kubeconfig="$pki/kube-scheduler.kubeconfig" \
  --authorization-kubeconfig="$pki/kube-scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$sched_port" \
  --leader-elect=false \
  "${sched_extra[@]}"

# --- kwok -----------------------------------------------------------------------------------------
# Explicit stages: node initialisation, lease-based heartbeat, pods to Running, job pods to
# Succeeded, and deletion of terminating pods (nothing else would remove them without kubelets).
# A pod that uses ResourceClaims runs only once its claims are prepared, as a kubelet starts its
# containers only after the DRA driver's kubelet plugin prepared them: pod-ready takes pods without
# claims, and a copy of it (pod-ready-dra-prepared) those that the emulated plugin of gpuscale-sim
# annotated gpuscale.io/sim-dra-prepared=true (lib/sim dra_driver.h).
stages=$dir/kwok-stages.yaml
: >"$stages"
for f in node-initialize node-heartbeat-with-lease pod-complete pod-delete; do
  cat "$bin/kwok-stages/$f.yaml" >>"$stages"
  echo "---" >>"$stages"
done
claimless="    - key: '.spec.resourceClaims'\n      operator: 'DoesNotExist'"
prepared="    - key: '.metadata.annotations[\"gpuscale.io/sim-dra-prepared\"]'\n      operator: 'In'"
prepared+="\n      values: ['true']"
sed "/^    matchExpressions:/a\\
$claimless" "$bin/kwok-stages/pod-ready.yaml" >>"$stages"
echo "---" >>"$stages"
sed -e "s/^  name: pod-ready$/  name: pod-ready-dra-prepared/" -e "/^    matchExpressions:/a\\
$prepared" "$bin/kwok-stages/pod-ready.yaml" >>"$stages"
echo "---" >>"$stages"
start kwok "$bin/kwok" \
  --kubeconfig="$dir/kubeconfig" \
  --config="$stages" \
  --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector="$node_annotation=$node_annotation_value" \
  --cidr=10.244.0.1/16 --node-ip=10.10.0.1 \
  --node-lease-duration-seconds=40 \
  --server-address="127.0.0.1:$kwok_port"

wait_for kube-controller-manager "kube-controller-manager /healthz" \
  insecure_ok "https://127.0.0.1:$kcm_port/healthz"
wait_for kube-scheduler "kube-scheduler /healthz" insecure_ok "https://127.0.0.1:$sched_port/healthz"
wait_for kwok "kwok /healthz" curl -sf --max-time 5 "http://127.0.0.1:$kwok_port/healthz"
wait_for kube-apiserver "the default namespace" kc get namespace default
wait_for kube-controller-manager "the default service account" kc -n default get serviceaccount default

# --- the real node --------------------------------------------------------------------------------
if [ -n "$real_node" ]; then
  # logs/exec: kube-apiserver's identity towards the kubelet (its authorization is a webhook).
  kc create clusterrolebinding gpuscale-apiserver-kubelet-client \
    --clusterrole=system:kubelet-api-admin --user=kube-apiserver-kubelet-client >/dev/null
  # What kube-proxy routes the kubernetes Service's ClusterIP to.
  kc apply -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels:
    kubernetes.io/service-name: kubernetes
    endpointslice.kubernetes.io/managed-by: gpuscale-test-cluster
addressType: IPv4
endpoints:
- addresses: ["$kas_address"]
  conditions: {ready: true}
ports:
- {name: https, port: $kas_port, protocol: TCP}
EOF
  rn_node_up "$kubelet_port" "$kubelet_healthz_port" "$proxy_healthz_port" "$proxy_metrics_port"
fi

# --- environment for users of the cluster ---------------------------------------------------------
{
  echo "# Written by tests/cluster/up.sh; source it to talk to this cluster."
  for kv in \
    "GPUSCALE_CLUSTER_DIR=$dir" \
    "GPUSCALE_CLUSTER_BIN=$bin" \
    "KUBECONFIG=$dir/kubeconfig" \
    "GPUSCALE_APISERVER_URL=$server" \
    "GPUSCALE_APISERVER_PORT=$kas_port" \
    "GPUSCALE_ETCD_PORT=$etcd_port" \
    "GPUSCALE_ETCD_PEER_PORT=$etcd_peer_port" \
    "GPUSCALE_KCM_PORT=$kcm_port" \
    "GPUSCALE_SCHEDULER_PORT=$sched_port" \
    "GPUSCALE_KWOK_PORT=$kwok_port" \
    "GPUSCALE_PKI_DIR=$pki" \
    "GPUSCALE_CA_CERT=$pki/ca.crt" \
    "GPUSCALE_ADMIN_CERT=$pki/admin.crt" \
    "GPUSCALE_ADMIN_KEY=$pki/admin.key" \
    "GPUSCALE_FRONT_PROXY_CA_CERT=$pki/front-proxy-ca.crt" \
    "GPUSCALE_KWOK_NODE_ANNOTATION=$node_annotation" \
    "GPUSCALE_KWOK_NODE_ANNOTATION_VALUE=$node_annotation_value" \
    "GPUSCALE_HPA_SYNC_PERIOD=$hpa_sync" \
    "GPUSCALE_SCENARIO=$scenario" \
    "GPUSCALE_REAL_NODE=${real_node:+$rn_node_name}" \
    "GPUSCALE_CONTAINERD_ADDRESS=${real_node:+$dir/node/containerd/containerd.sock}"; do
    printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"
  done
} >"$dir/env"

trap - INT TERM
echo "up: cluster ready at $server (kubeconfig: $dir/kubeconfig, env: $dir/env)"
