#!/usr/bin/env bash
# gpuscale-adapter soaked where it runs: in-cluster mode on the real test control plane
# (tests/cluster), registered with the real aggregator, for GPUSCALE_SOAK_SECONDS (default 600):
#   - a ServiceAccount's bearer token sent straight to the adapter (real TokenReview and
#     SubjectAccessReview, cached 10 s, so reviewed again every 10 s), 100 requests/s (wrk);
#   - the same token through kube-apiserver's aggregator (front-proxy identity, real
#     SubjectAccessReview), 20 requests/s (wrk), and the real HPA controller reading the metric
#     every 5 s;
#   - a new token every 30 s (a new TokenReview) asking for 50 pods, junk tokens and anonymous
#     requests with ever new paths (invalid tokens remembered, anonymous ones denied by
#     SubjectAccessReview), 5 requests/s in all, each on a new TLS connection;
#   - churn: the Deployment scaled between 10 and 20 pods every 20 s and a pod deleted every 15 s
#     (informer events, the exporter's series follow), and the rule file rewritten every 60 s
#     (alternating two versions: a reload each time).
# The adapter's resident set and live heap (gpuscale_heap_in_use_bytes) are sampled every 10 s.
# Printed: the samples, a summary table for docs/benchmarks.md (requests, failures, reloads,
# reviews, memory at minute 1 / the end, the least-squares slope over everything after minute 2)
# and the machine. Exits 1 when a request failed (other than the junk's expected 401/403/429) or a
# reload did not happen; the memory verdict is for the reader (see docs/benchmarks.md).
# Usage: bench/soak/cluster_soak.sh [BUILD_DIR]
# Exit 77 (skipped) when the cluster binaries, gpuscale-adapter, prometheus or wrk are missing.
set -euo pipefail
# shellcheck source=../lib/cluster_bench.sh
source "$(dirname "$0")/../lib/cluster_bench.sh" bench-soak "$@"
duration=${GPUSCALE_SOAK_SECONDS:-600}
adapter=${GPUSCALE_ADAPTER_BIN:-$build/bin/gpuscale-adapter}
prometheus_run=$src/tests/support/prometheus_run.sh
e2e_require_cluster
e2e_require "$adapter" /usr/bin/prometheus /usr/bin/wrk /usr/bin/curl /usr/bin/python3 /usr/bin/openssl
e2e_on_exit 'adapter_stack_stop'
e2e_on_exit '"$prometheus_run" stop "$work/prometheus"'
e2e_show_on_failure "$work/adapter.log"

step "control plane, a KWOK node, the Deployment web (10 pods)"
e2e_cluster_up
e2e_kwok_node soak-node
kc create namespace soak >/dev/null
eventually 60 "default service account in soak" kc -n soak get serviceaccount default -o name
e2e_web_deployment soak 10 soak-node
at_least() { [ "$(e2e_running soak app=web)" -ge "$1" ]; }
eventually 300 "10 Running pods" at_least 10

step "a caller: ServiceAccount soak/hpa-soak may read custom metrics"
token=$(adapter_stack_metrics_reader soak hpa-soak)

step "their Triton counters, Prometheus, the adapter behind the aggregator"
adapter_pod_exporter soak app=web
# Two versions of the rules (same metric, PromQL differing in a no-op), swapped every minute.
sed 's/namespace="default"/namespace="soak"/' "$src/rules/triton.yaml" >"$work/rules-a.yaml"
sed 's/(1+delta/(1.0+delta/g' "$work/rules-a.yaml" >"$work/rules-b.yaml"
cp "$work/rules-a.yaml" "$work/rules.yaml"
adapter_stack_init "$work" "$adapter" "$work/rules.yaml"
adapter_stack_identity
adapter_stack_certificate
metrics_port=$(free_port)
ADAPTER_EXTRA_ARGS=(--metrics-bind-address "127.0.0.1:$metrics_port")
# glibc's per-thread caches count as live heap in mallinfo2 (up to ~0.2 MB for each of the
# adapter's threads, filling as the threads take turns): off, as in adapter_soak_test, so the live
# heap is the program's.
GLIBC_TUNABLES=glibc.malloc.tcache_count=0 adapter_stack_start "$prom_url"
adapter_stack_register
path='/apis/custom.metrics.k8s.io/v1beta1/namespaces/soak/pods/%2A/avg_time_queue_us?labelSelector=app%3Dweb'
served() { curl -sfk -H "Authorization: Bearer $token" "https://127.0.0.1:$ADAPTER_PORT$path" | grep -q Pod; }
eventually 120 "the metric, directly" served
e2e_hpa soak web 10 20 avg_time_queue_us 1000 >/dev/null

metric() { # family (unlabelled, or with labels as printed) -> value, 0 when absent
  curl -sf "http://127.0.0.1:$metrics_port/metrics" | awk -v f="$1" '$1 == f {v = $2} END {print v + 0}'
}
sum_metric() { # name label-substring -> sum
  curl -sf "http://127.0.0.1:$metrics_port/metrics" |
    awk -v f="$1" -v l="$2" 'index($1, f "{") == 1 && index($1, l) > 0 {s += $2} END {print s + 0}'
}
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$ADAPTER_PID/status"; }

step "soak: $duration s"
cat >"$work/paced.lua" <<'LUA'
-- One request per connection every `pace` ms (wrk's delay()).
local pace = tonumber(os.getenv("PACE_MS") or "40")
function delay() return pace end
LUA
t0=$SECONDS
PACE_MS=40 wrk -t1 -c4 -d"${duration}s" -s "$work/paced.lua" -H "Authorization: Bearer $token" \
  "https://127.0.0.1:$ADAPTER_PORT$path" >"$work/wrk-direct.txt" 2>&1 &
direct=$!
PACE_MS=100 wrk -t1 -c2 -d"${duration}s" -s "$work/paced.lua" -H "Authorization: Bearer $token" \
  "$GPUSCALE_APISERVER_URL$path" >"$work/wrk-aggregated.txt" 2>&1 &
aggregated=$!
# Fresh, junk and anonymous callers, 5 a second; a new real token every 30 s.
(
  set +e  # a failed call is recorded, it does not end the loop
  i=0 fresh=$token
  while :; do
    i=$((i + 1))
    if [ $((i % 150)) -eq 0 ]; then fresh=$(kc -n soak create token hpa-soak --duration=1h); fi
    # The valid caller asks for 50 pods, as its HPAs would; junk and anonymous callers make up
    # ever new tokens and paths.
    case $((i % 3)) in
      0) auth=(-H "Authorization: Bearer $fresh") pod=p$((i % 50)) ;;
      1) auth=(-H "Authorization: Bearer junk-$i") pod=p$i ;;
      2) auth=() pod=p$i ;;
    esac
    code=$(curl -sk -o /dev/null -w '%{http_code}' "${auth[@]}" \
      "https://127.0.0.1:$ADAPTER_PORT/apis/custom.metrics.k8s.io/v1beta1/namespaces/soak/pods/$pod/avg_time_queue_us")
    echo "$((i % 3)) $code" >>"$work/callers.txt"
    sleep 0.2
  done
) &
callers=$!
# Churn: scaling, deleted pods, rule reloads.
(
  set +e
  n=0
  while :; do
    sleep 5
    n=$((n + 5))
    if [ $((n % 20)) -eq 0 ]; then kc -n soak scale deployment web --replicas $((10 + (n / 20 % 2) * 10)) >/dev/null; fi
    if [ $((n % 15)) -eq 0 ]; then
      victim=$(kc -n soak get pods -l app=web -o name | sed -n 1p)
      [ -n "$victim" ] && kc -n soak delete "$victim" --wait=false >/dev/null 2>&1 || true
    fi
    if [ $((n % 60)) -eq 0 ]; then
      if cmp -s "$work/rules.yaml" "$work/rules-a.yaml"; then next=b; else next=a; fi
      cp "$work/rules-$next.yaml" "$work/rules.yaml.tmp" && mv "$work/rules.yaml.tmp" "$work/rules.yaml"
    fi
  done
) &
churn=$!
e2e_on_exit "kill $direct $aggregated $callers $churn 2>/dev/null || true"
: >"$work/samples.txt"
while [ $((SECONDS - t0)) -lt "$duration" ]; do
  sleep 10
  printf '%d %s %s\n' $((SECONDS - t0)) "$(rss_kib)" "$(metric gpuscale_heap_in_use_bytes)" \
    >>"$work/samples.txt"
done
wait "$direct" "$aggregated" || true
kill "$callers" "$churn" 2>/dev/null || true
wait "$callers" "$churn" 2>/dev/null || true

step "results"
echo "seconds RSS-KiB heap-bytes"
cat "$work/samples.txt"
reloads=$(sum_metric gpuscale_config_reloads_total 'result="success"')
reload_failures=$(sum_metric gpuscale_config_reloads_total 'result="failure"')
cache=$(sum_metric gpuscale_auth_review_cache_lookups_total 'result="hit"')
misses=$(sum_metric gpuscale_auth_review_cache_lookups_total 'result="miss"')
hpa_failures=$(event_reasons web | grep -cE 'FailedGetPodsMetric|FailedComputeMetricsReplicas' || true)
python3 - "$work" "$duration" "$reloads" "$reload_failures" "$cache" "$misses" "$hpa_failures" <<'PY'
import os, re, sys
work, duration, reloads, reload_failures, hits, misses, hpa_failures = sys.argv[1:]
def wrk(name):
    text = open(os.path.join(work, name)).read()
    total = int(re.search(r"(\d+) requests in", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    p99 = re.search(r"99%\s+(\S+)", text)
    return total, int(bad.group(1)) if bad else 0, sum(map(int, errors.groups())) if errors else 0, p99.group(1) if p99 else "-"
direct, aggregated = wrk("wrk-direct.txt"), wrk("wrk-aggregated.txt")
callers = [l.split() for l in open(os.path.join(work, "callers.txt"))]
fresh_bad = sum(1 for kind, code in callers if kind == "0" and code not in ("200", "404"))
junk = {}
for kind, code in callers:
    junk.setdefault(kind, {}).setdefault(code, 0)
    junk[kind][code] += 1
samples = [tuple(map(float, l.split())) for l in open(os.path.join(work, "samples.txt"))]
late = [s for s in samples if s[0] >= 120]
def slope(points, column):
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[column] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[column] - my) for p in points) / sxx if sxx else 0.0
first = next(s for s in samples if s[0] >= 60)
mib = lambda kib: kib / 1024
print()
print("| measure | value |")
print("|---|---|")
print(f"| requests straight to the adapter (token, 100/s) | {direct[0]:,}, non-2xx {direct[1]}, socket errors {direct[2]}, p99 {direct[3]} |")
print(f"| requests through the aggregator (20/s) | {aggregated[0]:,}, non-2xx {aggregated[1]}, socket errors {aggregated[2]}, p99 {aggregated[3]} |")
print(f"| fresh tokens / junk tokens / anonymous (5/s) | codes {junk.get('0')} / {junk.get('1')} / {junk.get('2')} |")
print(f"| review cache hits / misses (reviews sent) | {float(hits):,.0f} / {float(misses):,.0f} |")
print(f"| rule reloads (success / failure) | {float(reloads):.0f} / {float(reload_failures):.0f} |")
print(f"| HPA failed metric reads (events) | {hpa_failures} |")
print(f"| resident set at minute 1 → end (max) | {mib(first[1]):.1f} → {mib(samples[-1][1]):.1f} MiB ({mib(max(s[1] for s in samples)):.1f}) |")
print(f"| live heap at minute 1 → end | {first[2] / 2**20:.1f} → {samples[-1][2] / 2**20:.1f} MiB |")
print(f"| slope after minute 2: resident set, live heap | {slope(late, 1) * 3600 / 1024:+.1f} MiB/h, {slope(late, 2) * 3600 / 2**20:+.1f} MiB/h |")
failed = direct[1] + direct[2] + aggregated[1] + aggregated[2] + fresh_bad + int(hpa_failures)
if failed or float(reloads) < int(duration) // 60 - 1:
    print("FAIL: failed requests or missing reloads (above)")
    sys.exit(1)
PY
uptime
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME")"
