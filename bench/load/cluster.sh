#!/usr/bin/env bash
# In-cluster load benchmark of gpuscale-adapter on the real test control plane (tests/cluster), side by
# side in one run, at each pod count (default "10 1000"; GPUSCALE_BENCH_PODS="10 1000 5000"):
#   - in-cluster, objects from watch caches (the default), direct over HTTPS with a service account's
#     bearer token (real TokenReview and SubjectAccessReview, cached) and through kube-apiserver's
#     aggregator (the APIService points at this adapter);
#   - in-cluster with --object-cache=false: a LIST per request, as prometheus-adapter does (this one
#     runs with --v 6 so its log gives the PromQL sent);
#   - --standalone: no Kubernetes API, the selector evaluated against kube_pod_labels series;
#   - the same PromQL sent straight to Prometheus.
# The request is the HPA's: pods/*/app_requests_total?labelSelector=app=web in namespace bench, whose
# Deployment has N Running pods (KWOK) and one counter per pod in a static exporter that a real
# Prometheus scrapes every second. wrk -t2 -c16 over HTTPS keep-alive, GPUSCALE_BENCH_SECONDS (10) each;
# the cached and standalone adapters are measured twice, alternately, and the better run of each is kept.
# Also reported: the adapter's CPU time per request (cached and standalone: what the two cores could
# serve if nothing else ran, whatever else loads the machine), and for the cached adapter its RSS idle (synced, before the load) and right after the
# load, and kube-apiserver calls per served request (gpuscale_apiserver_kube_requests_per_request).
# Usage: bench/load/cluster.sh [BUILD_DIR]   (prints a markdown table for docs/benchmarks/adapter.md)
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter, prometheus or wrk are missing.
set -euo pipefail
# shellcheck source=../lib/cluster_bench.sh
source "$(dirname "$0")/../lib/cluster_bench.sh" bench-cluster "$@"
duration=${GPUSCALE_BENCH_SECONDS:-10}
sizes=${GPUSCALE_BENCH_PODS:-10 1000}
adapter=$build/bin/gpuscale-adapter
prometheus_run=$src/tests/support/prometheus_run.sh
e2e_require_cluster
e2e_require "$adapter" /usr/bin/prometheus /usr/bin/wrk /usr/bin/curl /usr/bin/python3
adapter_pids=()
e2e_on_exit 'for p in "${adapter_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; true'
e2e_on_exit '"$prometheus_run" stop "$work/prometheus"'
e2e_show_on_failure "$work/adapter.log"

step "control plane, a KWOK node"
e2e_cluster_up
e2e_kwok_node bench-node
kc wait --for=condition=Ready node/bench-node --timeout=120s >/dev/null
kc create namespace bench >/dev/null
eventually 60 "default service account in bench" kc -n bench get serviceaccount default -o name
e2e_web_deployment bench 0 bench-node

step "a caller: service account bench/hpa-bench may read custom metrics"
token=$(adapter_stack_metrics_reader bench hpa-bench)

step "exporter and Prometheus"
mkdir -p "$work/exporter"
write_metrics() { # from the pods that exist: a counter per pod and kube-state-metrics' pod labels
  kc -n bench get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' |
    awk 'BEGIN { print "# TYPE app_requests_total counter" }
      NF { print "app_requests_total{namespace=\"bench\",pod=\"" $1 "\"} 7"
           print "kube_pod_labels{namespace=\"bench\",pod=\"" $1 "\",label_app=\"web\"} 1" }' \
      >"$work/exporter/metrics.tmp"
  mv "$work/exporter/metrics.tmp" "$work/exporter/metrics"
}
write_metrics
adapter_exporter_prometheus
cat >"$work/rules.yaml" <<'RULES'
rules:
- seriesQuery: 'app_requests_total{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
RULES

step "three adapters: LIST per request, standalone, cached (registered with the aggregator)"
adapter_stack_init "$work" "$adapter" "$work/rules.yaml"
adapter_stack_identity
adapter_stack_certificate
start() { # name extra-args...
  local name=$1
  shift
  ADAPTER_PORT=
  ADAPTER_EXTRA_ARGS=(--workers 8 "$@")
  adapter_stack_start "$prom_url"
  adapter_pids+=("$ADAPTER_PID")
  printf -v "port_$name" %s "$ADAPTER_PORT"
  printf -v "pid_$name" %s "$ADAPTER_PID"
}
start listing --object-cache=false --v 6
start standalone --standalone
start cached
ADAPTER_PORT=$port_cached
adapter_stack_register

path='/apis/custom.metrics.k8s.io/v1beta1/namespaces/bench/pods/%2A/app_requests_total?labelSelector=app%3Dweb'
get() { # base-url: the request as hpa-bench
  curl -sfk --max-time 30 -H "Authorization: Bearer $token" "$1$path"
}
count_items() { python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'; }
answers() { [ "$(get "$1" 2>/dev/null | count_items 2>/dev/null)" = "$2" ]; }
adapter_metric() { # port exposition-line-prefix -> value (0 when absent)
  curl -sfk --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" "https://127.0.0.1:$1/metrics" |
    python3 -c '
import sys
prefix = sys.argv[1]
print(next((float(l.rsplit(" ", 1)[1]) for l in sys.stdin if l.startswith(prefix)), 0))' "$2"
}
rss_mb() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
cpu_ticks() { [ "$1" = 0 ] && echo 0 || awk '{print $14 + $15}' "/proc/$1/stat"; }
wrk_rate() { # server-pid (0: none) url [wrk args...] -> "req/s p99(ms) server-CPU-µs-per-request"
  local pid=$1 url=$2 t0 t1
  shift 2
  t0=$(cpu_ticks "$pid")
  wrk -t2 -c16 -d"${duration}s" --latency "$@" "$url" >"$work/wrk.txt" 2>&1 || true
  t1=$(cpu_ticks "$pid")
  awk -v ticks=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v pid="$pid" '
    /requests in/ {n=$1} /Requests\/sec/ {rps=$2}
    /^ +99%/ {v=$2; if (v ~ /ms$/) {sub("ms","",v)} else if (v ~ /us$/) {sub("us","",v); v=v/1000} else if (v ~ /s$/) {sub("s","",v); v=v*1000}; p99=v}
    END {cpu = (pid == 0 || n == 0) ? "-" : sprintf("%.0f", ticks / hz * 1e6 / n); printf "%.0f %.1f %s\n", rps, p99, cpu}' "$work/wrk.txt"
}
running() {
  [ "$(kc -n bench get pods -l app=web --field-selector status.phase=Running -o name | wc -l)" -eq "$1" ]
}

sum_key='gpuscale_apiserver_kube_requests_per_request_sum{route="custom_metric"}'
count_key='gpuscale_apiserver_kube_requests_per_request_count{route="custom_metric"}'
auth=(-H "Authorization: Bearer $token")
rows=()
for n in $sizes; do
  step "$n pods"
  kc -n bench scale deployment web --replicas "$n" >/dev/null
  eventually 1200 "$n Running pods" running "$n"
  write_metrics
  for name in listing standalone cached; do
    port_var=port_$name
    eventually 180 "$name answers $n items" answers "https://127.0.0.1:${!port_var}" "$n"
  done
  eventually 60 "the aggregator answers $n items" answers "$GPUSCALE_APISERVER_URL" "$n"
  promql=$(grep -o 'query: sum(app_requests_total.*' "$work/adapter.log" | tail -1 | cut -c8-)
  direct="$prom_url/api/v1/query?query=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$promql")"
  sleep 2
  idle=$(rss_mb "$pid_cached")
  kube_sum0=$(adapter_metric "$port_cached" "$sum_key")
  kube_count0=$(adapter_metric "$port_cached" "$count_key")
  # Cached and standalone alternate twice (the machine may be shared); the better run of each counts.
  read -r c_rps c_p99 c_cpu < <(wrk_rate "$pid_cached" "https://127.0.0.1:$port_cached$path" "${auth[@]}")
  read -r s_rps s_p99 s_cpu < <(wrk_rate "$pid_standalone" "https://127.0.0.1:$port_standalone$path")
  read -r c2_rps c2_p99 c2_cpu < <(wrk_rate "$pid_cached" "https://127.0.0.1:$port_cached$path" "${auth[@]}")
  read -r s2_rps s2_p99 s2_cpu < <(wrk_rate "$pid_standalone" "https://127.0.0.1:$port_standalone$path")
  if [ "$c2_rps" -gt "$c_rps" ]; then c_rps=$c2_rps c_p99=$c2_p99 c_cpu=$c2_cpu; fi
  if [ "$s2_rps" -gt "$s_rps" ]; then s_rps=$s2_rps s_p99=$s2_p99 s_cpu=$s2_cpu; fi
  read -r a_rps a_p99 _ < <(wrk_rate 0 "$GPUSCALE_APISERVER_URL$path" "${auth[@]}")
  after=$(rss_mb "$pid_cached")
  kube_sum1=$(adapter_metric "$port_cached" "$sum_key")
  kube_count1=$(adapter_metric "$port_cached" "$count_key")
  read -r l_rps l_p99 _ < <(wrk_rate 0 "https://127.0.0.1:$port_listing$path" "${auth[@]}")
  read -r p_rps p_p99 _ < <(wrk_rate 0 "$direct")
  per_request=$(python3 -c 'import sys; s0,s1,c0,c1=map(float,sys.argv[1:]); print("%.4f" % ((s1-s0)/max(1,c1-c0)))' \
    "$kube_sum0" "$kube_sum1" "$kube_count0" "$kube_count1")
  share=$(python3 -c 'import sys; print("%.0f %%" % (100*float(sys.argv[1])/max(1,float(sys.argv[2]))))' "$c_rps" "$s_rps")
  rows+=("| $n | $c_rps ($c_p99 ms) | $a_rps ($a_p99 ms) | $l_rps ($l_p99 ms) | $s_rps ($s_p99 ms) | $p_rps ($p_p99 ms) | $share | $c_cpu / $s_cpu µs | $per_request | $idle → $after MB |")
  echo "${rows[-1]}"
done

echo
echo "| pods | in-cluster, cached: direct | cached, through kube-apiserver | in-cluster, LIST per request | standalone | Prometheus, same PromQL | cached / standalone req/s | adapter CPU per request, cached / standalone | kube-apiserver calls per request (cached) | cached adapter RSS idle → after load |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
