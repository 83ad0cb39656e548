#!/usr/bin/env bash
# Load benchmark of gpuscale-adapter against direct Prometheus queries of the same PromQL, in one run:
#   1. overhead: `hey` at a fixed 200 req/s (4 workers x 50 q/s, keep-alive), direct Prometheus query vs the
#      adapter's wildcard request that sends that query, with the adapter's cache off (--metrics-cache-ttl=0)
#      so every request reaches Prometheus; p50/p99 of both and the difference;
#   2. throughput: `wrk` (HTTPS keep-alive) as fast as possible on the cached HPA-style request
#      (same metric and namespace, default 2s TTL) and on the direct Prometheus query, with cache hits
#      answered on the I/O threads (the default) and, by a third adapter, with --inline-cache-hits=false
#      (every request hops to a handler thread and back) and, by a fourth, as the baseline, without the
#      hop and with the protections that can be turned off turned off; these alternate (A B C C B A),
#      and each one's CPU time per request is reported beside its req/s.
# The adapters run with --workers 4 and, but for the baseline, every serving protection at its default.
# Starts the simulator's exporter, a Debian prometheus and four adapters on loopback ports, stops them
# at exit.
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

start_adapter() {  # PORT TTL [FLAGS...]
  local port=$1 ttl=$2
  shift 2
  "$build/bin/gpuscale-adapter" --config rules/triton.yaml --standalone --prometheus-url "$prom_url" \
    --metrics-relist-interval 5s --secure-port "$port" --cert-dir "$work/certs-$port" --metrics-cache-ttl "$ttl" \
    --workers 4 "$@" >"$work/adapter-$port.log" 2>&1 &
  pids+=($!)
  adapter_pid[$port]=$!
}
declare -A adapter_pid
uncached=$(free_port)
cached=$(free_port)
hop=$(free_port)
bare=$(free_port)
start_adapter "$uncached" 0s
start_adapter "$cached" 2s
start_adapter "$hop" 2s --inline-cache-hits=false
start_adapter "$bare" 2s --max-requests-inflight=0 --max-connections=0 --max-connections-per-source=0 \
  --request-timeout=0s
declare -A port_of=([inline]=$cached [hop]=$hop [bare]=$bare)
path=/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us
for port in "$uncached" "$cached" "$hop" "$bare"; do
  wait_for sh -c "curl -sk https://127.0.0.1:$port$path | grep -q triton-2"
done

# The PromQL the adapter sends for that request (rules/triton.yaml, all pods of the namespace).
promql='avg(delta(nv_inference_queue_duration_us{namespace="default",pod!=""}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod!=""}[30s]))) by (pod)'
direct="$prom_url/api/v1/query?query=$(/usr/bin/python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$promql")"

hey_percentiles() {  # URL -> "p50 p99" in ms
  hey -z "${duration}s" -c 4 -q 50 "$1" >"$work/hey.txt"
  awk '/ 50% in/ {p50=$3*1000} / 99% in/ {p99=$3*1000} /Requests\/sec/ {rps=$2} END {printf "%.2f %.2f %.0f\n", p50, p99, rps}' "$work/hey.txt"
}
cpu_seconds() {  # PID -> user + system CPU seconds so far
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f\n", ($14 + $15) / hz}' "/proc/$1/stat"
}
# URL [PID] -> "req/s p99(ms) CPU-µs-per-request-of-PID CPU-bound-capacity(req/s)"; the capacity is
# what the machine's cores would serve if the server and wrk had them to themselves: cores / (server
# + wrk CPU time per request). On a shared machine req/s follows the share of CPU the processes get,
# and a server with more threads gets more; CPU time per request does not.
wrk_rate() {
  local before=0 after=0
  [ -n "${2:-}" ] && before=$(cpu_seconds "$2")
  /usr/bin/time -f "%U %S" -o "$work/wrk.time" wrk -t2 -c32 -d"${duration}s" --latency "$1" >"$work/wrk.txt"
  [ -n "${2:-}" ] && after=$(cpu_seconds "$2")
  awk -v cpu="$(awk -v a="$after" -v b="$before" 'BEGIN {print a - b}')" \
    -v wrkcpu="$(awk '{print $1 + $2}' "$work/wrk.time")" -v cores="$(nproc)" \
    '/requests in/ {n=$1} /Requests\/sec/ {rps=$2} /^ +99%/ {v=$2; if (v ~ /ms$/) {sub("ms","",v)} else if (v ~ /us$/) {sub("us","",v); v=v/1000} else if (v ~ /s$/) {sub("s","",v); v=v*1000}; p99=v}
     END {per = n > 0 ? cpu / n : 0; both = n > 0 ? (cpu + wrkcpu) / n : 0;
          printf "%.0f %.2f %.1f %.0f\n", rps, p99, per * 1e6, (both > 0 ? cores / both : 0)}' "$work/wrk.txt"
}

read -r d50 d99 drps < <(hey_percentiles "$direct")
read -r a50 a99 arps < <(hey_percentiles "https://127.0.0.1:$uncached$path")
read -r c50 c99 crps < <(hey_percentiles "https://127.0.0.1:$cached$path")
read -r wd wd99 _ _ < <(wrk_rate "$direct")
# The cached adapters in the order A B C C B A, each figure the mean of its two runs, so that a
# change in the machine's load during the run weighs on all alike. A: the default (every protection
# on, cache hits answered on the I/O threads); B: the hop to a handler thread; C: no hop and the
# protections that can be turned off turned off (no in-flight limit, connection caps or deadline).
order=(inline hop bare bare hop inline)
declare -A rps p99 cpu cap runs
for which in "${order[@]}"; do
  read -r r p c k < <(wrk_rate "https://127.0.0.1:${port_of[$which]}$path" "${adapter_pid[${port_of[$which]}]}")
  rps[$which]=$(awk -v a="${rps[$which]:-0}" -v b="$r" 'BEGIN {print a + b / 2}')
  p99[$which]=$(awk -v a="${p99[$which]:-0}" -v b="$p" 'BEGIN {print a + b / 2}')
  cpu[$which]=$(awk -v a="${cpu[$which]:-0}" -v b="$c" 'BEGIN {print a + b / 2}')
  cap[$which]=$(awk -v a="${cap[$which]:-0}" -v b="$k" 'BEGIN {print a + b / 2}')
  runs[$which]="${runs[$which]:+${runs[$which]} and }$r"
done
row() {  # WHICH -> "req/s | p99 | CPU | capacity"
  awk -v r="${rps[$1]}" -v p="${p99[$1]}" -v c="${cpu[$1]}" -v k="${cap[$1]}" \
    'BEGIN {printf "%.0f | %.2f | %.1f | %.0f", r, p, c, k}'
}
pct() {  # ARRAY-NAME A B -> A as a percentage of B
  local -n values=$1
  awk -v a="${values[$2]}" -v b="${values[$3]}" 'BEGIN {printf "%.0f %%", 100 * a / b}'
}
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

| as fast as possible (wrk, 32 connections) | req/s | p99 ms | adapter CPU µs / request | CPU-bound capacity, req/s |
|---|---|---|---|---|
| Prometheus direct (baseline) | $wd | $wd99 | | |
| adapter, cached, no hop, protections off (baseline of the protections) | $(row bare) |
| adapter, cached, hop to a handler thread (--inline-cache-hits=false) | $(row hop) |
| adapter, cached, default: every protection on, cache hits on the I/O threads | $(row inline) |

Default against the baseline: $(pct rps inline bare) of the req/s, $(pct cpu inline bare) of the CPU per request,
$(pct cap inline bare) of the CPU-bound capacity. Default against the hop: $(pct rps inline hop) of the req/s,
$(pct cpu inline hop) of the CPU per request, $(pct cap inline hop) of the capacity.
(wrk runs, req/s: default ${runs[inline]}; hop ${runs[hop]}; baseline ${runs[bare]})

Prometheus queries sent over the whole run: adapter with cache off $(sent "$uncached") (for $((arps * duration)) requests),
cached adapter $(sent "$cached") (hey and wrk phases, one per TTL), the one with the hop $(sent "$hop"),
the baseline $(sent "$bare").
MD
