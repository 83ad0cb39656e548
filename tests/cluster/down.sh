#!/usr/bin/env bash
# Stops a control plane started by up.sh DIR (usage: down.sh DIR), in reverse start order: SIGTERM,
# then SIGKILL after a grace period. Only processes recorded in DIR/run whose command line still
# mentions DIR are signalled, so a recycled pid is never hit. Safe to run twice; keeps DIR (logs).
# A real node (up.sh --real-node) goes first: kube-proxy, kubelet, containerd, whatever is left in
# its cgroups, its mounts; its iptables chains, bridge and the kernel settings the kubelet changed go
# last, once kube-apiserver (bound to the bridge's address) has stopped (lib/real-node.sh).
set -uo pipefail

[ $# -eq 1 ] || {
  echo "usage: $0 DIR" >&2
  exit 2
}
[ -d "$1" ] || exit 0
dir=$(cd "$1" && pwd)
run=$dir/run
[ -d "$run" ] || exit 0
grace=${GPUSCALE_CLUSTER_STOP_GRACE:-15}

ours() { # pid: alive and started for this cluster directory
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$dir"
}

stop() { # name
  local pidfile=$run/$1.pid pid i
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid"; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < grace * 10; i++)); do
      ours "$pid" || break
      sleep 0.1
    done
    if ours "$pid"; then
      echo "down: $1 ($pid) ignored SIGTERM; killing" >&2
      kill -KILL "$pid" 2>/dev/null
    fi
  fi
  rm -f "$pidfile"
}

real_node=
if [ -f "$dir/node/state" ]; then
  real_node=1
  here=$(cd "$(dirname "$0")" && pwd)
  # shellcheck source=lib/real-node.sh
  source "$here/lib/real-node.sh"
  stop kube-proxy
  stop kubelet
  rn_down_node "$dir"
fi

order=()
[ -f "$run/order" ] && mapfile -t order <"$run/order"
for ((i = ${#order[@]} - 1; i >= 0; i--)); do
  stop "${order[$i]}"
done
# Anything recorded but missing from the order file (e.g. an interrupted up.sh).
for f in "$run"/*.pid; do
  [ -e "$f" ] && stop "$(basename "$f" .pid)"
done
rm -f "$run/order"
if [ -n "$real_node" ]; then
  rn_bin=${GPUSCALE_CLUSTER_BIN:-$here/bin}
  [ ! -f "$dir/env" ] || rn_bin=$(sed -n "s/^export GPUSCALE_CLUSTER_BIN=//p" "$dir/env")
  rn_down_host "$dir" "$rn_bin"
fi
exit 0
