#!/usr/bin/env bash
# HTTPS serving throughput of the metrics API layer alone: gpuscale-bench-server (fake provider, ten pods)
# under wrk over TLS keep-alive on loopback, with an HPA-style wildcard request.
# Usage: bench/load/https_serving.sh [build dir] ; env DURATION (10s) CONNECTIONS (64) WRK_THREADS (1)
#        WORKERS (server worker threads, 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}
wrk_threads=${WRK_THREADS:-1}
workers=${WORKERS:-2}
server="$build/bin/gpuscale-bench-server"
[ -x "$server" ] || { echo "build $server first (cmake --build $build --target gpuscale-bench-server)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk not installed" >&2; exit 77; }

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$server" --secure-port="$port" --bind-address=127.0.0.1 --cert-dir="$work/certs" \
  --worker-threads="$workers" --shutdown-timeout=5s >"$work/server.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  curl -sk -o /dev/null "https://127.0.0.1:$port/healthz" && break
  sleep 0.1
done

path="/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us?labelSelector=app%3Dtriton"
url="https://127.0.0.1:$port$path"
curl -sk -A bench "$url" | head -c 200; echo " ..."
echo "== warm-up"
wrk -t "$wrk_threads" -c "$connections" -d 2s "$url" >/dev/null
# Server CPU time (user+system, clock ticks) around the run: CPU per request does not depend on how busy the
# machine is, unlike req/s.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "== wrk -t $wrk_threads -c $connections -d $duration --latency (server workers: $workers, cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg))"
before=$(cpu_ticks)
/usr/bin/time -f "%U %S" -o "$work/wrk.time" wrk -t "$wrk_threads" -c "$connections" -d "$duration" \
  --latency "$url" | tee "$work/wrk.txt"
after=$(cpu_ticks)
rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
requests=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.txt")
p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")
cpu_us=$(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
wrk_us=$(awk -v n="$requests" '{printf "%.1f", ($1 + $2) * 1e6 / n}' "$work/wrk.time")
# What both cores could do if nothing else ran: 2 CPU-seconds per second over (server + client) CPU per request.
capacity=$(awk -v s="$cpu_us" -v c="$wrk_us" -v n="$(nproc)" 'BEGIN {printf "%.0f", n * 1e6 / (s + c)}')
echo "RESULT req/s=$rps p50=$p50 p99=$p99 server-cpu-per-request=${cpu_us}us wrk-cpu-per-request=${wrk_us}us cpu-bound-capacity=${capacity}req/s"
