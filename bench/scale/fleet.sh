#!/usr/bin/env bash
# gpuscale-reconciler at fleet scale on the real test control plane (tests/cluster) with KWOK nodes:
# FLEET_NODES GPU nodes (default 1000: 40% A100-40GB and 30% H100-80GB with every GPU cut into 1g
# MIG slices, 30% T4 whole GPUs; GPU Operator labels and nvidia.com/ allocatable as gpuscale-sim
# writes them), one Deployment and one HPA per node, FLEET_PODS pods in all (default 20000), of
# which FLEET_HELD HPAs (default 100) are held at their ceiling: maxReplicas == replicas, their pods
# ask for 3 slices each so 18 fit the node and the rest are Pending "Insufficient", the metric at
# twice the target, ScalingLimited TooManyReplicas (bench/scale/fleet_objects.py has the layout).
#
# There is no HPA controller (kube-controller-manager runs without it): nothing would serve its
# metric, and without one it would rewrite every status to "failed to get metric". The HPAs'
# status is written once, as the controller writes it; the reconciler reads only spec and status.
# Non-held pods are bound to their node by the Deployment's template (nodeName); the held ones and
# fleet-react's go through kube-scheduler (nodeSelector on the node's hostname, which also confines
# the planner to that node), which leaves the surplus Pending Unschedulable.
#
# Measured, for each run of FLEET_RUNS, one after the other on the same cluster, with the reconciler
# in observe mode, passes every 2 s (--resync-period) over FLEET_STEADY_SECONDS (default 60) of
# steady state. A run is BINARY:TRIM[:VAR=VALUE...]: BINARY "new" (BUILD_DIR's, or the program
# FLEET_RECONCILER names) or "base" (the program FLEET_BASELINE_RECONCILER names: another version
# measured beside it), TRIM the --trim-cached-objects value (true: the informers keep only the fields
# the readers read; false: whole objects), then environment variables for that run only (e.g.
# MALLOC_ARENA_MAX=16). Default "new:true new:false"; with FLEET_BASELINE_RECONCILER, "base:true"
# first. What each run reports:
#   - time to the first pass (start, LIST of everything, first pass) and the pass duration (the
#     reconciler's gpuscale_reconciler_pass_duration_seconds: mean over the window and the
#     histogram's bucket holding the slowest pass) and the process's CPU time per pass;
#   - resident memory: VmRSS at the end of the window and VmHWM (peak) from /proc;
#   - requests per pass by verb: the reconciler's own (gpuscale_kube_client_requests_total) and
#     kube-apiserver's whole apiserver_request_total (every client: KWOK's lease renewals dominate);
#     the run fails if the reconciler sent a LIST in the window.
# Then the reaction: the reconciler in act mode with a policy that admits only fleet-react/react
# (18 pods of 3 slices filling its A100 node, maxReplicas 18, not yet limited); its HPA's status is
# written at its ceiling and the time to the first write to the node (labels, annotations, taints)
# and to a gpu-operator ConfigMap is measured by watches opened before.
# Prints a markdown table for docs/benchmarks/fleet.md. Not a test (no ctest entry): a run of the
# full size takes about half an hour on 2 cores.
# Usage: bench/scale/fleet.sh [BUILD_DIR]
# Exit 77 (skipped) when the cluster binaries or gpuscale-reconciler are missing.
set -euo pipefail
# shellcheck source=../lib/cluster_bench.sh
source "$(dirname "$0")/../lib/cluster_bench.sh" bench-fleet "$@"
# shellcheck source=../../tests/e2e/reconciler/lib.sh
source "$(dirname "$0")/../../tests/e2e/reconciler/lib.sh"
nodes=${FLEET_NODES:-1000}
pods=${FLEET_PODS:-20000}
held=${FLEET_HELD:-100}
steady=${FLEET_STEADY_SECONDS:-60}
rec_new=${FLEET_RECONCILER:-$build/bin/gpuscale-reconciler}
rec_base=${FLEET_BASELINE_RECONCILER:-}
runs=${FLEET_RUNS:-${rec_base:+base:true }new:true new:false}
rec=$rec_new
objects=$src/bench/scale/fleet_objects.py
e2e_require_cluster
e2e_require "$rec" /usr/bin/python3 /usr/bin/curl
case " $runs" in *" base:"*) [ -n "$rec_base" ] || die "a base run without FLEET_BASELINE_RECONCILER" ;; esac
e2e_show_on_failure "$work/rec.log"
# The reconciler's first LIST of every pod takes longer than the e2e tests' 30 s on 2 busy cores.
export REC_READY_TIMEOUT=${REC_READY_TIMEOUT:-600}

step "control plane without the HPA controller, its clients' rate limits raised"
export GPUSCALE_KUBE_CONTROLLERS_DISABLED=horizontal-pod-autoscaler-controller
export GPUSCALE_KUBE_CONTROLLER_MANAGER_EXTRA_ARGS="--kube-api-qps=300 --kube-api-burst=600 \
--concurrent-replicaset-syncs=4 --concurrent-deployment-syncs=4"
export GPUSCALE_CLUSTER_READY_TIMEOUT=300
e2e_cluster_up
api=(--server "$GPUSCALE_APISERVER_URL" --ca "$GPUSCALE_CA_CERT" --cert "$GPUSCALE_ADMIN_CERT"
  --key "$GPUSCALE_ADMIN_KEY")

step "$nodes nodes, $nodes Deployments and HPAs ($held held at their ceiling), $pods pods"
python3 "$objects" populate "${api[@]}" --nodes "$nodes" --pods "$pods" --held "$held" \
  --mig-config "$src/tests/data/partition/mig-parted-default-config.yaml" | tee "$work/layout.log"
layout=$(tail -n 1 "$work/layout.log")
react_node=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["react_node"])' "$layout")
# Every pod but the held Deployments' surplus runs.
want_running=$(python3 -c 'import json,sys; l = json.loads(sys.argv[1]); print(l["pods"] - l["pending"])' "$layout")
running() { kc get pods -A --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l; }
all_running() {
  local n
  n=$(running)
  echo "  $(date -u +%H:%M:%S) $n of $want_running pods Running"
  [ "$n" -ge "$want_running" ]
}
E2E_POLL=15 eventually 5400 "$want_running pods Running" all_running
E2E_POLL=0.5
step "settling: no pod or Deployment changing"
sleep 30

policy_observe=$work/policy-observe.yaml policy_act=$work/policy-act.yaml
{
  echo "policies:"
  echo "- name: fleet"
  printf '  hpaNamespaces: [%s]\n' "$(seq -s, -f 'fleet-%g' 0 9)"
  echo "- name: react"
  echo "  hpaNamespaces: [fleet-react]"
} >"$policy_observe"
printf 'policies:\n- name: react\n  hpaNamespaces: [fleet-react]\n' >"$policy_act"

metric_sum() { # file metric-prefix [label filter regex]: sum of the matching samples
  awk -v p="$2" -v f="${3:-}" 'index($0, p) == 1 && (f == "" || $0 ~ f) { n += $NF } END { printf "%.6f\n", n + 0 }' "$1"
}
by_verb() { # file metric: "verb count" lines
  python3 - "$1" "$2" <<'EOF'
import re, sys
counts = {}
for line in open(sys.argv[1]):
    if line.startswith(sys.argv[2] + "{"):
        verb = re.search(r'verb="([A-Za-z]*)"', line)
        if verb:
            counts[verb.group(1).upper()] = counts.get(verb.group(1).upper(), 0) + float(line.split()[-1])
for verb, n in sorted(counts.items()):
    print(verb, n)
EOF
}
per_pass() { # before after passes: "VERB n/pass ..." of the difference
  join -a 2 -e 0 -o 0,1.2,2.2 <(sort "$1") <(sort "$2") |
    awk -v p="$3" '{ d = $3 - $2; if (d > 0) printf "%s %.2f, ", $1, d / p }' | sed 's/, $//'
}
apiserver_metrics() {
  curl -sf --cacert "$GPUSCALE_CA_CERT" --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" \
    "$GPUSCALE_APISERVER_URL/metrics" >"$1"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # user + system, in clock ticks
proc_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
passes() { rec_status "$REC_STATUS_PORT" /metrics >"$work/m.now" && metric_sum "$work/m.now" 'gpuscale_reconciler_pass_duration_seconds_count' 'result="ok"'; }
passed() { [ "$(passes | cut -d. -f1)" -ge "$1" ]; }

results=()
for run in $runs; do
  IFS=: read -r binary trim envs <<<"$run"
  case $binary in new) rec=$rec_new ;; base) rec=$rec_base ;; *) die "run $run: binary new or base" ;; esac
  step "observe mode, $run: first pass"
  : >"$work/rec.log"
  started=$(date +%s.%N)
  # The run's variables reach only the reconciler it starts.
  IFS=: read -r -a run_env <<<"$envs"
  for v in "${run_env[@]}"; do export "${v?}"; done
  reconciler_start_one "$policy_observe" --mode=observe --trim-cached-objects="$trim"
  for v in "${run_env[@]}"; do unset "${v%%=*}"; done
  rec=$rec_new
  eventually 600 "a first pass" passed 1
  first=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
  sleep 10
  step "steady state for $steady s"
  rec_status "$REC_STATUS_PORT" /metrics >"$work/rec.before"
  apiserver_metrics "$work/kas.before"
  cpu0=$(cpu_ticks "$REC_PID")
  sleep "$steady"
  cpu1=$(cpu_ticks "$REC_PID")
  rec_status "$REC_STATUS_PORT" /metrics >"$work/rec.after"
  apiserver_metrics "$work/kas.after"
  rss=$(proc_kib "$REC_PID" VmRSS) hwm=$(proc_kib "$REC_PID" VmHWM)
  e2e_stop "$REC_PID"
  read -r n sum < <(python3 - "$work/rec.before" "$work/rec.after" <<'EOF'
import sys
def read(path):
    count = total = 0.0
    for line in open(path):
        if line.startswith('gpuscale_reconciler_pass_duration_seconds_count{result="ok"'):
            count = float(line.split()[-1])
        if line.startswith('gpuscale_reconciler_pass_duration_seconds_sum{result="ok"'):
            total = float(line.split()[-1])
    return count, total
(c0, s0), (c1, s1) = read(sys.argv[1]), read(sys.argv[2])
print(int(c1 - c0), s1 - s0)
EOF
  )
  [ "$n" -gt 0 ] || die "no pass in the steady window"
  # The histogram's smallest bucket holding every pass of the window: an upper bound of the slowest.
  slowest=$(python3 - "$work/rec.before" "$work/rec.after" <<'EOF'
import re, sys
def buckets(path):
    out = {}
    for line in open(path):
        m = re.match(r'gpuscale_reconciler_pass_duration_seconds_bucket\{.*le="([^"]+)".*result="ok".*\} (\S+)', line) or \
            re.match(r'gpuscale_reconciler_pass_duration_seconds_bucket\{result="ok".*le="([^"]+)".*\} (\S+)', line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out
b0, b1 = buckets(sys.argv[1]), buckets(sys.argv[2])
total = b1.get("+Inf", 0) - b0.get("+Inf", 0)
for le in sorted((k for k in b1 if k != "+Inf"), key=float):
    if b1[le] - b0.get(le, 0) >= total:
        print(f"≤ {float(le) * 1000:g} ms")
        break
else:
    print("> 10 s")
EOF
  )
  by_verb "$work/rec.before" gpuscale_kube_client_requests_total >"$work/rv.before"
  by_verb "$work/rec.after" gpuscale_kube_client_requests_total >"$work/rv.after"
  by_verb "$work/kas.before" apiserver_request_total >"$work/kv.before"
  by_verb "$work/kas.after" apiserver_request_total >"$work/kv.after"
  rec_requests=$(per_pass "$work/rv.before" "$work/rv.after" "$n")
  kas_requests=$(per_pass "$work/kv.before" "$work/kv.after" "$n")
  rec_lists=$(join -a 2 -e 0 -o 0,1.2,2.2 <(sort "$work/rv.before") <(sort "$work/rv.after") |
    awk '$1 == "LIST" { print $3 - $2 }')
  kas_lists=$(join -a 2 -e 0 -o 0,1.2,2.2 <(sort "$work/kv.before") <(sort "$work/kv.after") |
    awk '$1 == "LIST" { print $3 - $2 }')
  mean=$(python3 -c "print(f'{$sum / $n * 1000:.0f}')")
  # CPU time per pass (the whole process over the window, idle time between passes included).
  cpu=$(python3 -c "print(f'{($cpu1 - $cpu0) / $(getconf CLK_TCK) / $n * 1000:.0f}')")
  echo "$run: first pass after ${first} s; $n passes, mean ${mean} ms, slowest $slowest, CPU ${cpu} ms per pass;" \
    "VmRSS $((rss / 1024)) MiB, VmHWM $((hwm / 1024)) MiB; reconciler requests/pass: ${rec_requests:-none};" \
    "kube-apiserver (all clients) requests/pass: $kas_requests; LISTs in the window: reconciler ${rec_lists:-0}," \
    "kube-apiserver ${kas_lists:-0}"
  results+=("| $binary, \`--trim-cached-objects=$trim\`${envs:+, \`${envs//:/ }\`} | ${first} s | $n | ${mean} ms | $slowest | ${cpu} ms | $((rss / 1024)) MiB | $((hwm / 1024)) MiB | ${rec_requests:-none} | ${rec_lists:-0} | ${kas_lists:-0} |")
  [ "${rec_lists:-0}" = 0 ] || die "the reconciler sent $rec_lists LIST requests in steady state"
done

step "reaction: act mode on fleet-react/react, its HPA set at its ceiling"
: >"$work/rec.log"
reconciler_start_one "$policy_act"
eventually 600 "a first pass" passed 1
sleep 5
python3 "$objects" first-write "${api[@]}" --node "$react_node" --timeout 60 >"$work/first-write.log" &
watcher=$!
eventually 30 "the watches" grep -q watching "$work/first-write.log"
sleep 1
t0=$(python3 "$objects" at-ceiling "${api[@]}")
wait "$watcher" || true
e2e_stop "$REC_PID"
cat "$work/first-write.log"
reaction() { # what
  awk -v w="$1" -v t0="$t0" '$1 == w { printf "%.2f s", $2 - t0 }' "$work/first-write.log"
}
node_s=$(reaction node) cm_s=$(reaction configmap)
grep -E 'plan:|Started|node operation' "$work/rec.log" | head -n 5 || true

echo
echo "Fleet: $layout"
echo
echo "| run | first pass | passes | pass (mean) | slowest pass | CPU per pass | VmRSS | VmHWM | reconciler requests per pass | reconciler LISTs | kube-apiserver LISTs (all clients) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${results[@]}"
echo
echo "Reaction (HPA status at its ceiling -> first write): node ${node_s:-none in 60 s}, gpu-operator ConfigMap ${cm_s:-none in 60 s}"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))," \
  "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
