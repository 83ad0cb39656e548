#!/usr/bin/env bash
# Load benchmark of gpuscale-adapter against direct Prometheus queries of the same PromQL, in one run:
#   1. overhead: `hey` at a fixed 200 req/s (4 workers x 50 q/s, keep-alive), direct Prometheus query vs the
#      adapter's wildcard request that sends that query, with the adapter's cache off (--metrics-cache-ttl=0)
#      so every request reaches Prometheus; p50/p99 of both and the difference;
#   2. throughput: `wrk` (HTTPS keep-alive) as fast as possible on the cached HPA-style request
#      (same metric and namespace, default 2s TTL) and on the direct Prometheus query.
# Both adapters run with --workers 4. Starts the simulator's exporter, a Debian prometheus and two adapters on loopback ports, stops them at exit.
# Usage: bench/load/run.sh [BUILD_DIR]   (prints a markdown block for docs/benchmarks/adapter.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
duration=${GPUSCALE_BENCH_SECONDS:-15}
for tool in prometheus hey wrk curl; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is not installed" >&2; exit 77; }
done

# shellcheck source=scripts/lib/loopback_parts.sh
source scripts/lib/loopback_parts.sh
parts_begin gpuscale-load
wait_for() {
  for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "bench: timed out waiting for: $*" >&2
  exit 1
}

"$build/bin/gpuscale-sim" exporter --listen 127.0.0.1:0 --port-file "$work/exporter.port" >"$work/exporter.log" 2>&1 &
pids+=($!)
wait_for test -s "$work/exporter.port"
prom_url=$(tests/support/prometheus_run.sh start "$work/prometheus" --scrape "127.0.0.1:$(cat "$work/exporter.port")")

start_adapter() {  # PORT TTL
  "$build/bin/gpuscale-adapter" --config rules/triton.yaml --standalone --prometheus-url "$prom_url" \
    --metrics-relist-interval 5s --secure-port "$1" --cert-dir "$work/certs-$1" --metrics-cache-ttl "$2" \
    --workers 4 >"$work/adapter-$1.log" 2>&1 &
  pids+=($!)
}
uncached=$(free_port)
cached=$(free_port)
start_adapter "$uncached" 0s
start_adapter "$cached" 2s
path=/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us
for port in "$uncached" "$cached"; do
  wait_for sh -c "curl -sk https://127.0.0.1:$port$path | grep -q triton-2"
done

# The PromQL the adapter sends for that request (rules/triton.yaml, all pods of the namespace).
promql='avg(delta(nv_inference_queue_duration_us{namespace="default",pod!=""}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod!=""}[30s]))) by (pod)'
direct="$prom_url/api/v1/query?query=$(/usr/bin/python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$promql")"

hey_percentiles() {  # URL -> "p50 p99" in ms
  hey -z "${duration}s" -c 4 -q 50 "$1" >"$work/hey.txt"
  awk '/ 50% in/ {p50=$3*1000} / 99% in/ {p99=$3*1000} /Requests\/sec/ {rps=$2} END {printf "%.2f %.2f %.0f\n", p50, p99, rps}' "$work/hey.txt"
}
wrk_rate() {  # URL -> "req/s p99(ms)"
  wrk -t2 -c32 -d"${duration}s" --latency "$1" >"$work/wrk.txt"
  awk '/Requests\/sec/ {rps=$2} /^ +99%/ {v=$2; if (v ~ /ms$/) {sub("ms","",v)} else if (v ~ /us$/) {sub("us","",v); v=v/1000} else if (v ~ /s$/) {sub("s","",v); v=v*1000}; p99=v} END {printf "%.0f %.2f\n", rps, p99}' "$work/wrk.txt"
}

read -r d50 d99 drps < <(hey_percentiles "$direct")
read -r a50 a99 arps < <(hey_percentiles "https://127.0.0.1:$uncached$path")
read -r c50 c99 crps < <(hey_percentiles "https://127.0.0.1:$cached$path")
read -r wd wd99 < <(wrk_rate "$direct")
read -r wc wc99 < <(wrk_rate "https://127.0.0.1:$cached$path")
sent() {  # PORT -> instant queries that adapter sent to Prometheus
  curl -sk "https://127.0.0.1:$1/metrics" |
    awk '/^gpuscale_adapter_prometheus_requests_total\{backend="default",endpoint="query",result="success"\}/ {print $2}'
}

cat <<MD
Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)
Command: bench/load/run.sh (hey -z ${duration}s -c 4 -q 50; wrk -t2 -c32 -d${duration}s --latency)

| at 200 req/s (hey, keep-alive) | p50 ms | p99 ms | req/s |
|---|---|---|---|
| Prometheus direct (baseline) | $d50 | $d99 | $drps |
| adapter, cache off (only concurrent identical queries coalesce) | $a50 | $a99 | $arps |
| adapter, cache 2s | $c50 | $c99 | $crps |

Overhead p99 (adapter cache off minus direct): $(awk -v a="$a99" -v d="$d99" 'BEGIN {printf "%.2f ms", a-d}')

| as fast as possible (wrk, 32 connections) | req/s | p99 ms |
|---|---|---|
| Prometheus direct (baseline) | $wd | $wd99 |
| adapter, cached HPA-style request | $wc | $wc99 |

Prometheus queries sent over the whole run: adapter with cache off $(sent "$uncached") (for $((arps * duration)) requests),
cached adapter $(sent "$cached") (hey and wrk phases, one per TTL).
MD
