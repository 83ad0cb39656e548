# shellcheck shell=bash
# The real node of the test cluster (up.sh --real-node), sourced by up.sh and down.sh.
#
# One Node run by the real kubelet (same version as the control plane) on containerd + runc, with
# pods on a bridge made here and kube-proxy in iptables mode, next to the KWOK nodes. Everything
# lives under DIR/node or in objects named after the cluster, and down.sh removes all of it:
#   network   bridge $rn_bridge with $rn_gateway/24 (the node's and kube-apiserver's address); pods
#             get addresses of that /24 from the CNI bridge plugin (host-local IPAM, state under
#             DIR). Nothing listens on other interfaces, and no traffic is routed off the bridge:
#             pods reach only the node address and Service IPs (DNAT'ed to it), so IP forwarding
#             stays off and the CNI plugin does no masquerading.
#   containerd private socket, root, state and runc root under DIR/node/containerd; the sandbox
#             ("pause") image is a static program of ours imported from a docker-archive.
#   cgroups   a v1 (or v2) cgroup /$rn_cgroup in every hierarchy: containerd and its shims run in
#             .../node, the kubelet puts pods under it (cgroupRoot); down.sh kills what is left in
#             it and removes it.
#   kernel    the kubelet insists on a few kernel tunables (vm.overcommit_memory, kernel.panic,
#             kernel.panic_on_oops); their values before are saved and restored by down.sh.
# Only one real node per machine (network namespace) at a time: the bridge name and pod range are
# fixed, and two kube-proxies would each rewrite the other's KUBE-* chains. up.sh exits 5 when the
# bridge exists.
# Requires root, containerd, runc, ctr, iptables, ip and the CNI plugins (bridge, host-local,
# loopback) in $rn_cni_bin.

rn_bridge=gpuscale0
rn_gateway=10.203.0.1
rn_pod_cidr=10.203.0.0/24
rn_service_cidr=10.0.0.0/24  # up.sh's --service-cluster-ip-range
rn_node_name=gpuscale-node-0
rn_pause_image=localhost/gpuscale-pause:1
rn_cni_bin=${GPUSCALE_CNI_BIN_DIR:-/usr/lib/cni}
# Kernel tunables the kubelet sets when they differ (pkg/kubelet/cm setupKernelTunables).
rn_kernel_keys=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

rn_cgroup_name() { # dir
  echo "gpuscale-$(printf '%s' "$1" | sha256sum | cut -c1-10)"
}

# Every cgroup hierarchy mounted under /sys/fs/cgroup (v1 controllers, named ones, or v2).
rn_cgroup_mounts() {
  awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts | grep '^/sys/fs/cgroup' || true
}

# What is missing on this machine for a real node (empty output: nothing).
rn_missing() { # bin-dir
  local b
  [ "$(id -u)" -eq 0 ] || echo "root"
  for b in containerd containerd-shim-runc-v2 runc ctr iptables iptables-save ip; do
    command -v "$b" >/dev/null || echo "$b"
  done
  for b in bridge host-local loopback; do
    [ -x "$rn_cni_bin/$b" ] || echo "$rn_cni_bin/$b"
  done
  for b in kubelet kube-proxy; do
    [ -x "$1/$b" ] || echo "$1/$b (tests/cluster/build.sh)"
  done
  command -v "${CXX:-c++}" >/dev/null || echo "${CXX:-c++}"
}

# Before kube-apiserver starts: the bridge (kube-apiserver binds to its address) and the node's
# state file, written first so that down.sh can undo a partial start.
rn_network_up() {
  local node=$dir/node
  mkdir -p "$node"
  if ip link show "$rn_bridge" >/dev/null 2>&1; then
    fail "bridge $rn_bridge exists: another real-node cluster runs here (or was not stopped)" 5
  fi
  {
    echo "rn_bridge=$rn_bridge"
    echo "rn_cgroup=$(rn_cgroup_name "$dir")"
    for k in "${rn_kernel_keys[@]}"; do
      echo "rn_sysctl_${k//\//_}=$(cat "/proc/sys/$k")"
    done
    [ -e /run/containerd ] || echo "rn_made_run_containerd=1"
    [ -e /var/lib/kubelet ] || echo "rn_made_var_lib_kubelet=1"
    [ -e /var/lib/cni ] || echo "rn_made_var_lib_cni=1"
    [ -e /var/log/containers ] || echo "rn_made_var_log_containers=1"
  } >"$node/state"
  echo "rn_bridge_made=1" >>"$node/state"
  ip link add "$rn_bridge" type bridge
  ip addr add "$rn_gateway/24" dev "$rn_bridge"
  ip link set "$rn_bridge" up
  # Service IPs (kube-apiserver's --service-cluster-ip-range) route into the bridge: kube-proxy's
  # DNAT sends them on to a pod or the node address, and a Service IP without a rule (kube-proxy not
  # synced yet, no endpoints) dies on the bridge instead of following the default route off the
  # machine. The route goes away with the bridge.
  ip route add "$rn_service_cidr" dev "$rn_bridge"
}

# After the control plane is ready: containerd, the sandbox image, kubelet, kube-proxy; returns
# once the Node is Ready.
# shellcheck disable=SC2154  # bin, here, pki, logs, run, rn_images: from up.sh
rn_node_up() { # kubelet-port kubelet-healthz-port proxy-healthz-port proxy-metrics-port
  local node=$dir/node cg sock t0=$SECONDS
  cg=$(rn_cgroup_name "$dir")
  sock=$node/containerd/containerd.sock
  [ ${#sock} -lt 100 ] || fail "containerd socket path too long (${#sock} > 100): $sock"
  mkdir -p "$node"/{containerd/root,containerd/state,containerd/runc,cni/net.d,cni/ipam,images} \
    "$node"/{kubelet,pod-logs,volume-plugins}

  # --- cgroups: one subtree per cluster in every hierarchy ---
  local m parent
  while read -r m; do
    mkdir -p "$m/$cg/node"
    # A new v1 cpuset cgroup starts with no CPUs or memory nodes; processes cannot join it.
    for f in cpuset.cpus cpuset.mems; do
      [ -f "$m/$f" ] || continue
      for parent in "$m/$cg" "$m/$cg/node"; do
        if [ -z "$(tr -d '\n' <"$parent/$f")" ]; then cat "$m/$f" >"$parent/$f"; fi
      done
    done
  done < <(rn_cgroup_mounts)

  # --- CNI: bridge + host-local on the pre-made bridge; no gateway/masquerade handling by the
  # plugin (isGateway would enable IP forwarding), the default route comes from IPAM ---
  cat >"$node/cni/net.d/10-gpuscale.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "gpuscale",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$rn_bridge",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$node/cni/ipam",
        "ranges": [[{"subnet": "$rn_pod_cidr", "rangeStart": "${rn_gateway%.*}.10", "gateway": "$rn_gateway"}]],
        "routes": [{"dst": "0.0.0.0/0", "gw": "$rn_gateway"}]
      }
    }
  ]
}
EOF

  # --- containerd: private socket and directories; CRI on; plugins that would write outside DIR
  # (opt: /opt/containerd) or probe other storage off ---
  cat >"$node/containerd/config.toml" <<EOF
version = 2
root = "$node/containerd/root"
state = "$node/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$rn_pause_image"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_tls_streaming = false
  # The kubelet asks for oom_score_adj -998 for sandboxes; lowering it below our own needs
  # CAP_SYS_RESOURCE in the initial user namespace, which a (privileged) container may not have:
  # runc then dies with "failed to update /proc/self/oom_score_adj: Permission denied".
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$node/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$rn_cni_bin"
    conf_dir = "$node/cni/net.d"
    max_conf_num = 1
EOF
  # containerd (and so every shim it forks) starts inside the cluster's cgroup.
  local procs=()
  while read -r m; do procs+=("$m/$cg/node/cgroup.procs"); done < <(rn_cgroup_mounts)
  # shellcheck disable=SC2016  # expanded by the inner shell
  setsid bash -c 'for f in "${@:2}"; do echo $$ >"$f"; done; exec containerd --config "$1"' \
    _ "$node/containerd/config.toml" "${procs[@]}" >"$logs/containerd.log" 2>&1 </dev/null &
  echo $! >"$run/containerd.pid"
  echo containerd >>"$run/order"
  wait_for containerd "containerd" ctr --address "$sock" version

  # --- the sandbox image: a static program of ours, no registry ---
  "${CXX:-c++}" -std=c++20 -O2 -static -s -o "$node/images/pause" "$here/node/pause.cpp" \
    >"$logs/pause-build.log" 2>&1 || fail "building the pause program failed, see $logs/pause-build.log"
  python3 "$here/node/mkimage.py" "$node/images/pause.tar" "$rn_pause_image" "$node/images/pause"
  rn_import "$node/images/pause.tar"
  local img
  for img in "${rn_images[@]}"; do rn_import "$img"; done

  # --- kubelet ---
  kubeconfig "$node/kubelet.kubeconfig" kubelet-client
  cat >"$node/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $rn_gateway
port: $1
healthzBindAddress: 127.0.0.1
healthzPort: $2
readOnlyPort: 0
tlsCertFile: $pki/kubelet-server.crt
tlsPrivateKeyFile: $pki/kubelet-server.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
cgroupRoot: /$cg
failCgroupV1: false
failSwapOn: false
podLogsDir: $node/pod-logs
volumePluginDir: $node/volume-plugins
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
# kube-proxy owns the iptables rules; the kubelet's own canary chains are not needed.
makeIPTablesUtilChains: false
# A shared build machine's disk or memory use must not evict test pods or GC imported images
# (they cannot be pulled again).
evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
  start kubelet "$bin/kubelet" \
    --config="$node/kubelet.yaml" \
    --kubeconfig="$node/kubelet.kubeconfig" \
    --root-dir="$node/kubelet" --cert-dir="$node/kubelet/pki" \
    --hostname-override="$rn_node_name" --node-ip="$rn_gateway" \
    --node-labels=gpuscale.dev/real-node=true \
    --v=2

  # --- kube-proxy: iptables mode; NodePorts only on the bridge address; no sysctl writes ---
  kubeconfig "$node/kube-proxy.kubeconfig" kube-proxy
  cat >"$node/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $node/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $rn_pod_cidr
hostnameOverride: $rn_node_name
bindAddress: $rn_gateway
healthzBindAddress: 127.0.0.1:$3
metricsBindAddress: 127.0.0.1:$4
nodePortAddresses: ["$rn_gateway/32"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy "$bin/kube-proxy" --config="$node/kube-proxy.yaml" --v=2

  wait_for kubelet "Node $rn_node_name" kc get node "$rn_node_name"
  wait_for kubelet "Node $rn_node_name Ready" \
    kc wait --for=condition=Ready "node/$rn_node_name" --timeout=5s
  wait_for kube-proxy "kube-proxy /healthz" curl -sf --max-time 5 "http://127.0.0.1:$3/healthz"
  echo "up: real node $rn_node_name Ready $((SECONDS - t0)) s after containerd started" >&2
}

# shellcheck disable=SC2154  # logs: from up.sh
rn_import() { # docker-archive or OCI archive
  ctr --address "$dir/node/containerd/containerd.sock" -n k8s.io images import "$1" \
    >>"$logs/images.log" 2>&1 || fail "importing $1 into containerd failed, see $logs/images.log"
}

# --- tear-down (down.sh) ----------------------------------------------------------------------------

# With kubelet and kube-proxy stopped and containerd still running: the network namespaces of the
# pod sandboxes, to unmount once the containers are gone (the CRI plugin bind-mounts them outside
# DIR).
rn_container_ids() { # dir
  local sock=$1/node/containerd/containerd.sock
  [ -S "$sock" ] || return 0
  ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null || true
}

rn_sandbox_netns() { # dir
  local sock=$1/node/containerd/containerd.sock id
  for id in $(rn_container_ids "$1"); do
    ctr --address "$sock" -n k8s.io containers info "$id" 2>/dev/null |
      python3 -c '
import json, sys
spec = json.load(sys.stdin).get("Spec") or {}
for ns in (spec.get("linux") or {}).get("namespaces") or []:
    if ns.get("type") == "network" and ns.get("path", "").startswith("/var/run/netns/"):
        print(ns["path"])' 2>/dev/null || true
  done | sort -u
}

# Kills every process left in the cluster's cgroups (containers, shims), then removes the cgroups.
rn_cgroups_down() { # cgroup-name
  local m i left
  for ((i = 0; i < 50; i++)); do
    left=0
    while read -r m; do
      [ -d "$m/$1" ] || continue
      while read -r p; do
        [ -n "$p" ] || continue
        kill -KILL "$p" 2>/dev/null && left=1
      done < <(find "$m/$1" -name cgroup.procs -exec cat {} + 2>/dev/null)
    done < <(rn_cgroup_mounts)
    [ $left -eq 1 ] || break
    sleep 0.1
  done
  while read -r m; do
    [ -d "$m/$1" ] || continue
    find "$m/$1" -depth -type d -exec rmdir {} + 2>/dev/null ||
      echo "down: could not remove cgroup $m/$1" >&2
  done < <(rn_cgroup_mounts)
}

rn_unmount_under() { # dir
  local m
  # Deepest first; lazy so that a busy mount cannot block the tear-down.
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || echo "down: could not unmount $m" >&2
  done
}

rn_iptables_down() { # bin-dir
  local ipt t c rule
  # kube-proxy's own clean-up removes its chains and jumps (all modes)...
  if [ -x "$1/kube-proxy" ]; then
    "$1/kube-proxy" --cleanup --v=0 >/dev/null 2>&1 || true
  fi
  # ...but not every IPv6 one (canary, firewall): remove whatever KUBE-* chain is left in either
  # family, so that a later real node starts clean.
  for ipt in iptables ip6tables; do
    command -v "$ipt-save" >/dev/null || continue
    for t in filter nat mangle; do
      for c in $("$ipt-save" -t "$t" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$ipt-save" -t "$t" | grep -E -- "^-A [^ ]+ .*-j $c( |$)" | sed 's/^-A/-D/' |
          while read -r rule; do
            # eval: iptables-save quotes arguments (comments) the way a shell would.
            eval "$ipt -t $t $rule" 2>/dev/null || true
          done
        "$ipt" -t "$t" -F "$c" 2>/dev/null || true
      done
      for c in $("$ipt-save" -t "$t" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$ipt" -t "$t" -X "$c" 2>/dev/null || true
      done
    done
  done
}

# The ttrpc sockets of the shims of containers IDs (containerd 1.6 puts them in
# /run/containerd/s/, named sha256(<containerd address>/<namespace>/<id>)); a killed shim leaves its
# socket behind.
rn_shim_sockets() { # dir ids...
  local sock=$1/node/containerd/containerd.sock
  shift
  python3 - "$sock" "$@" <<'EOF'
import hashlib, sys
for i in sys.argv[2:]:
    print("/run/containerd/s/" + hashlib.sha256(f"{sys.argv[1]}/k8s.io/{i}".encode()).hexdigest())
EOF
}

rn_state() { # dir; loads the node's state file into the caller's variables
  rn_bridge="" rn_cgroup="" rn_bridge_made="" rn_made_run_containerd="" rn_made_var_lib_kubelet=""
  rn_made_var_lib_cni="" rn_made_var_log_containers=""
  [ -f "$1/node/state" ] || return 1
  # shellcheck disable=SC1091
  source "$1/node/state"
}

# down.sh, after kubelet and kube-proxy stopped: containerd, the containers, their mounts and cgroups.
rn_down_node() { # dir
  local dir=$1 ids=() netns=() shim_sockets=() n
  local rn_bridge rn_cgroup rn_bridge_made rn_made_run_containerd rn_made_var_lib_kubelet
  local rn_made_var_lib_cni rn_made_var_log_containers
  rn_state "$dir" || return 0
  mapfile -t ids < <(rn_container_ids "$dir")
  mapfile -t netns < <(rn_sandbox_netns "$dir")
  mapfile -t shim_sockets < <(rn_shim_sockets "$dir" "${ids[@]}")
  stop containerd
  [ -z "$rn_cgroup" ] || rn_cgroups_down "$rn_cgroup"
  for n in "${netns[@]}"; do
    umount "$n" 2>/dev/null
    rm -f "$n"
  done
  rm -f "${shim_sockets[@]}"
  # libcni's result cache (/var/lib/cni/results/<network>-<sandbox ID>-<interface>, a path
  # containerd 1.6 does not let us move), left behind when a sandbox was not torn down.
  for n in "${ids[@]}"; do rm -f "/var/lib/cni/results/gpuscale-$n-eth0"; done
  # The kubelet's links to container logs (/var/log/containers is hard-coded) that point into DIR.
  for n in /var/log/containers/*.log; do
    [ -L "$n" ] && [[ "$(readlink "$n")" == "$dir/"* ]] && rm -f "$n"
  done
  rn_unmount_under "$dir"
}

# down.sh, last (kube-apiserver listens on the bridge's address until it stopped): iptables, the
# bridge, kernel settings, paths outside DIR.
rn_down_host() { # dir bin-dir
  local dir=$1 k v
  local rn_bridge rn_cgroup rn_bridge_made rn_made_run_containerd rn_made_var_lib_kubelet
  local rn_made_var_lib_cni rn_made_var_log_containers
  rn_state "$dir" || return 0
  rn_iptables_down "$2"
  if [ -n "$rn_bridge_made" ] && ip link show "$rn_bridge" >/dev/null 2>&1; then
    ip link del "$rn_bridge"
  fi
  for k in "${rn_kernel_keys[@]}"; do
    v=rn_sysctl_${k//\//_}
    if [ -n "${!v:-}" ] && [ "$(cat "/proc/sys/$k")" != "${!v}" ]; then
      echo "${!v}" >"/proc/sys/$k" || echo "down: could not restore $k=${!v}" >&2
    fi
  done
  # Paths the kubelet or the shims hard-code; removed only when they did not exist before.
  [ -z "$rn_made_var_lib_kubelet" ] || rm -rf /var/lib/kubelet
  if [ -n "$rn_made_run_containerd" ]; then
    rmdir /run/containerd/s /run/containerd 2>/dev/null || true
  fi
  [ -z "$rn_made_var_lib_cni" ] || rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
  [ -z "$rn_made_var_log_containers" ] || rmdir /var/log/containers 2>/dev/null || true
  rm -f "$dir/node/state"
}
