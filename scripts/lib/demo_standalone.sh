#!/usr/bin/env bash
# `scripts/demo.sh --standalone`: gpuscale-adapter serving Triton's queue time as a custom metric from a real
# Prometheus, without a cluster, in well under a minute.
#
# Installs what is missing (scripts/setup.sh without the test cluster build), builds the adapter and the
# simulator, then starts on free loopback ports, each with its own temporary files:
#   1. gpuscale-sim exporter: Triton-like counters (and kube-state-metrics label series) for three pods,
#   2. the Debian prometheus, scraping it every second,
#   3. gpuscale-adapter --standalone with rules/triton.yaml,
# waits until the adapter has discovered avg_time_queue_us and has values for the three pods, and shows what
# `kubectl get --raw` sees of discovery and of namespaces/default/pods/%2A/avg_time_queue_us. Everything it
# started is stopped when it exits (also on Ctrl-C).
#
# Environment: GPUSCALE_BUILD_DIR (default build); GPUSCALE_SKIP_SETUP=1 runs neither scripts/setup.sh nor the
# build and uses the binaries already in GPUSCALE_BUILD_DIR/bin (the integration test does this).
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${GPUSCALE_BUILD_DIR:-build}
if [ "${GPUSCALE_SKIP_SETUP:-0}" != 1 ]; then
  GPUSCALE_SKIP_CLUSTER_BUILD=1 scripts/setup.sh
  echo "demo: building gpuscale-adapter and gpuscale-sim in $build/"
  cmake -S . -B "$build" -G Ninja >/dev/null
  cmake --build "$build" -j2 --target gpuscale-adapter gpuscale-sim >/dev/null
fi
for program in gpuscale-adapter gpuscale-sim; do
  if [ ! -x "$build/bin/$program" ]; then
    echo "demo: $build/bin/$program is missing (build it, or run without GPUSCALE_SKIP_SETUP)" >&2
    exit 1
  fi
done

# shellcheck source=scripts/lib/loopback_parts.sh
source scripts/lib/loopback_parts.sh
parts_begin gpuscale-demo
trap 'exit 130' INT TERM

# wait_for SECONDS DESCRIPTION COMMAND...: runs COMMAND again until it succeeds or the time is up.
wait_for() {
  local seconds=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "demo: $what did not come up within ${seconds}s; logs:" >&2
      tail -n 20 "$work"/*.log "$work"/prometheus/*.log >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

"$build/bin/gpuscale-sim" exporter --listen 127.0.0.1:0 --port-file "$work/exporter.port" \
  >"$work/exporter.log" 2>&1 &
pids+=($!)
wait_for 60 "the exporter" test -s "$work/exporter.port"
exporter_port=$(cat "$work/exporter.port")

prometheus_url=$(tests/support/prometheus_run.sh start "$work/prometheus" --scrape "127.0.0.1:$exporter_port")
echo "demo: exporter on 127.0.0.1:$exporter_port, prometheus at $prometheus_url"

adapter_port=$(free_port)
"$build/bin/gpuscale-adapter" --config rules/triton.yaml --standalone \
  --prometheus-url "$prometheus_url" --metrics-relist-interval 2s \
  --secure-port "$adapter_port" --cert-dir "$work/certs" >"$work/adapter.log" 2>&1 &
pids+=($!)

raw=/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us
kubectl_raw() {
  kubectl --kubeconfig=/dev/null --server "https://127.0.0.1:$adapter_port" --insecure-skip-tls-verify \
    --token=x get --raw "$1"
}
discovered() { kubectl_raw /apis/custom.metrics.k8s.io/v1beta1 | grep -q 'pods/avg_time_queue_us'; }
has_values() {
  local body
  body=$(kubectl_raw "$raw") || return 1
  for pod in triton-0 triton-1 triton-2; do
    grep -q "\"name\":\"$pod\"" <<<"$body" || return 1
  done
}
wait_for 180 "discovery of avg_time_queue_us" discovered
wait_for 180 "avg_time_queue_us values of the three pods" has_values
echo "demo: gpuscale-adapter on https://127.0.0.1:$adapter_port (standalone)"

show() {
  echo
  echo "\$ kubectl --kubeconfig=/dev/null --server https://127.0.0.1:$adapter_port --insecure-skip-tls-verify --token=x get --raw '$1'"
  kubectl_raw "$1"
}
show /apis/custom.metrics.k8s.io/v1beta1
show "$raw"
echo
echo "demo: done; stopping the adapter, prometheus and the exporter"
