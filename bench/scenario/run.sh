#!/usr/bin/env bash
# Runs one scenario of bench/scenario on the test control plane and prints, as its LAST line, one
# JSON object: scenario, reconciler, slo_violation_seconds, p50_queue_us, p95_queue_us,
# max_replicas, ceiling_to_capacity_seconds, reconfigurations, pods_disturbed (definitions in
# report.py). Writes OUT/samples.jsonl, OUT/result.json, OUT/timeline.svg, OUT/events.json (every
# Event at the end), OUT/{pods,nodes,configmaps}-final.json and the logs (OUT/run/).
#
#   bench/scenario/run.sh NAME --reconciler off|reactive|on [--speed N] [--out DIR] [--slo-us N]
#                         [--resource NAME] [--tail SECONDS] [--sample SECONDS] [--duration SECONDS]
# --reconciler: off (static partitioning), reactive (acts once the HPA is held at its ceiling),
# on (the policy default: also ahead of the ceiling, from the HPA's trend).
# --duration caps the scenario time sampled (default: the load pattern's end + --tail, 90 s).
# --speed N runs the load pattern's clock N times faster (requests are still served in real time).
# --slo-us: the queue-time SLO (default 1 s; 20 ms for t4-* scenarios); --target-us: the HPA's
# averageValue for avg_time_queue_us (default a quarter of the SLO: queue time is ~0 below capacity
# and explodes near it, so an HPA aiming at the SLO itself runs the pods at the edge).
# Binaries: $GPUSCALE_BINARY_DIR/bin (default build/bin), or GPUSCALE_{SIM,ADAPTER,RECONCILER}_BIN;
# GPUSCALE_EXTRA_SCRAPE=HOST:PORT adds a scrape target (another exporter).
#
# Parts (who simulates what):
#   tests/cluster   the real control plane: kube-apiserver + aggregator, controller-manager (the real
#                   HPA and Deployment controllers), scheduler; KWOK runs the pods (no containers)
#   gpuscale-sim    `run --scenario --speed N`: GPU nodes, GPU Operator (mig-manager, device plugin,
#                   GFD) through the API, and the inference load model (per-pod Triton series and
#                   model truth on its /metrics; the load starts when the first pod runs)
#   prometheus      the real Debian server, scraping gpuscale-sim every second
#   gpuscale-adapter in-cluster mode behind the aggregator (tests/e2e/lib/adapter_stack.sh)
#   gpuscale-reconciler  with --reconciler on|reactive, policy bench/scenario/policies/NAME.yaml if
#                   the scenario has one, else bench/scenario/policies/reconciler.yaml
#                   (reactive: the same with `anticipation: {enabled: false}` in every policy)
# The Deployment `triton` (namespace and selector from the scenario's load section) requests one
# unit of the scenario's partition resource; its HPA (Pods avg_time_queue_us, averageValue =
# --target-us, min 1) starts with maxReplicas = the resource's initial allocatable: the static
# ceiling.
# Exit: 0 with a result; 1 when a part fails (the JSON then carries "error"); 2 usage; 77 parts
# missing.
set -euo pipefail

usage() { sed -n '7,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
name=$1
shift
reconciler= speed=1 out= slo_us= target_us= resource= tail_s=90 sample_s=2 duration=
while [ $# -gt 0 ]; do
  case $1 in
    --reconciler) reconciler=$2; shift 2 ;;
    --speed) speed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --slo-us) slo_us=$2; shift 2 ;;
    --target-us) target_us=$2; shift 2 ;;
    --resource) resource=$2; shift 2 ;;
    --tail) tail_s=$2; shift 2 ;;
    --sample) sample_s=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    *) usage ;;
  esac
done
case $reconciler in on | reactive | off) ;; *) usage ;; esac
# Queue-time SLOs: ~1 s for the A100 scenarios (a request takes ~0.35-0.9 s of a 1g slice), 20 ms
# on the T4s (a few ms per request).
case $name in t4-*) slo_us=${slo_us:-20000} ;; *) slo_us=${slo_us:-1000000} ;; esac
target_us=${target_us:-$((slo_us / 4))}

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUSCALE_BINARY_DIR:-$src/build}
scenario=$src/bench/scenario/$name.yaml
# NAME may also be a scenario file elsewhere (the e2e test's short scenario).
if [[ $name == *.yaml ]]; then
  scenario=$(cd "$(dirname "$name")" && pwd)/$(basename "$name")
  name=$(basename "$name" .yaml)
fi
[ -f "$scenario" ] || { echo "no scenario $scenario" >&2; exit 2; }
bin=${GPUSCALE_CLUSTER_BIN:-$src/tests/cluster/bin}
sim=${GPUSCALE_SIM_BIN:-$build/bin/gpuscale-sim}
adapter=${GPUSCALE_ADAPTER_BIN:-$build/bin/gpuscale-adapter}
rec=${GPUSCALE_RECONCILER_BIN:-$build/bin/gpuscale-reconciler}
needed=("$bin"/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kubectl,kwok} "$sim"
  "$adapter" /usr/bin/prometheus)
[ "$reconciler" = off ] || needed+=("$rec")
for b in "${needed[@]}"; do
  [ -x "$b" ] || { echo "skip: $b not built or installed" >&2; exit 77; }
done

out=${out:-$src/bench/scenario/results/$name-reconciler-$reconciler}
rm -rf "$out"
mkdir -p "$out"
work=$out/run
mkdir -p "$work"
sim_pid= rec_pid= watch_pids=()
stop_pid() { [ -n "$1" ] || return 0; kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
cleanup() {
  local p
  for p in "${watch_pids[@]}"; do stop_pid "$p"; done
  stop_pid "$rec_pid"
  stop_pid "${ADAPTER_PID:-}"
  stop_pid "$sim_pid"
  "$src/tests/support/prometheus_run.sh" stop "$work/prometheus" >/dev/null 2>&1 || true
  "$src/tests/cluster/down.sh" "$work/cluster" >/dev/null 2>&1 || true
}
trap cleanup EXIT
log() { echo "== $(date -u +%H:%M:%S) $*" >&2; }
fail() { # message: the JSON line with the error, exit 1
  log "FAIL: $1"
  python3 -c 'import json,sys; print(json.dumps({"scenario": sys.argv[1], "reconciler": sys.argv[2],
"error": sys.argv[3]}))' "$name" "$reconciler" "$1"
  exit 1
}
wait_until() { # seconds what command...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out: $what"
    sleep 1
  done
}

# What the scenario says: namespace, selector, load length, the partition resource
# (workload.resource, else 1g.5gb slices on mixed-strategy MIG nodes, else nvidia.com/gpu), the
# reconciler's --gpu-mapping (reconciler.gpuMapping) and the Deployment's nodeSelector
# (workload.nodeSelector, as JSON).
read -r ns selector load_s default_resource gpu_mapping scale_down_type scale_down_value \
  scale_down_period scale_down_window node_selector < <(python3 - "$scenario" <<'PY'
import json, sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
workload = s.get("workload") or {}
down = (s.get("hpa") or {}).get("scaleDown") or {}
load = s.get("load") or {}
p = load.get("pattern") or {}
length = float(p.get("startSeconds", 0)) + float(p.get("durationSeconds", 0))
node = s["nodes"][0]
mig = node.get("migStrategy") == "mixed"
print(load.get("namespace", "default"), load.get("podSelector", "app=triton"), int(length),
      workload.get("resource") or ("nvidia.com/mig-1g.5gb" if mig else "nvidia.com/gpu"),
      (s.get("reconciler") or {}).get("gpuMapping", "node"),
      "Percent" if "percent" in down else "Pods", down.get("percent", down.get("pods", 1)),
      down.get("periodSeconds", 15), down.get("stabilizationWindowSeconds", 30),
      json.dumps(workload.get("nodeSelector") or {}, separators=(",", ":")))
PY
)
resource=${resource:-$default_resource}
app=${selector#*=}

log "cluster up ($name, reconciler $reconciler)"
"$src/tests/cluster/up.sh" "$work/cluster" --scenario "$scenario" >"$work/up.log" 2>&1 ||
  fail "tests/cluster/up.sh failed (see $work/up.log)"
# shellcheck disable=SC1091
source "$work/cluster/env"
export KUBECTL=$bin/kubectl
kc() { "$KUBECTL" "$@"; }

log "gpuscale-sim run"
"$sim" run --scenario "$scenario" --kubeconfig "$KUBECONFIG" --resync 1 --listen 127.0.0.1:0 \
  --port-file "$work/sim.port" --speed "$speed" --seed "${GPUSCALE_SEED:-1}" >"$work/sim.log" 2>&1 &
sim_pid=$!
wait_until 60 "gpuscale-sim port file" test -s "$work/sim.port"
sim_addr=127.0.0.1:$(cat "$work/sim.port")
wait_until 120 "gpuscale-sim /healthz" curl -sf "http://$sim_addr/healthz" -o /dev/null

log "Prometheus scraping gpuscale-sim"
prom=$("$src/tests/support/prometheus_run.sh" start "$work/prometheus" --scrape "$sim_addr" \
  ${GPUSCALE_EXTRA_SCRAPE:+--scrape "$GPUSCALE_EXTRA_SCRAPE"} --interval 1s) || fail "prometheus did not start"

log "gpuscale-adapter (in-cluster) behind the aggregator"
# shellcheck source=../../tests/e2e/lib/adapter_stack.sh
source "$src/tests/e2e/lib/adapter_stack.sh"
adapter_stack_init "$work" "$adapter" "$src/rules/triton.yaml"
adapter_stack_identity || fail "adapter identity"
adapter_stack_certificate || fail "adapter certificate"
adapter_stack_start "$prom" || fail "the adapter did not start"
adapter_stack_register || fail "APIServices not Available"

allocatable() {
  kc get nodes -o json | python3 -c '
import json, sys
r = sys.argv[1]
print(sum(int(n["status"].get("allocatable", {}).get(r, "0")) for n in json.load(sys.stdin)["items"]))' "$resource"
}
positive() { [ "$(allocatable)" -gt 0 ]; }
wait_until 120 "allocatable $resource" positive
ceiling=$(allocatable)

log "Deployment triton ($resource: 1 per pod) and its HPA (max $ceiling)"
kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null
wait_until 60 "default service account" kc -n "$ns" get serviceaccount default -o name
policy_annotation=
[ "$reconciler" = off ] || policy_annotation="annotations: {gpuscale.io/partition-policy: default}"
kc -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: triton}
spec:
  replicas: 1
  selector: {matchLabels: {app: $app}}
  template:
    metadata: {labels: {app: $app}}
    spec:
      nodeSelector: $node_selector
      tolerations: [{operator: Exists}]
      containers:
      - name: triton
        image: registry.invalid/tritonserver:never-pulled
        resources:
          requests: {$resource: "1"}
          limits: {$resource: "1"}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: triton
  $policy_annotation
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: triton}
  minReplicas: 1
  maxReplicas: $ceiling
  # Queue time is ~0 below capacity, so the HPA's proportional rule would drop to 1 replica in one
  # step and overload again; scale in by the scenario's hpa.scaleDown (default one pod per 15 s).
  behavior:
    scaleDown:
      stabilizationWindowSeconds: $scale_down_window
      policies: [{type: $scale_down_type, value: $scale_down_value, periodSeconds: $scale_down_period}]
  metrics:
  - type: Pods
    pods:
      metric: {name: avg_time_queue_us}
      target: {type: AverageValue, averageValue: "$target_us"}
YAML

# Watches, timestamped, for pods_disturbed: every change of the Deployment's desired replicas and
# every pod deletion (report.py matches deletions to scale-ins); and every HPA status change
# (maxReplicas, desired replicas, ScalingLimited status and reason: a reconciler can lift the ceiling
# within a sampling interval).
watch_to() { # file kubectl-args...
  python3 -c 'import signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
def stop(*_):
    p.terminate()
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
with open(sys.argv[1], "a") as f:
    for line in p.stdout:
        f.write("%.3f %s" % (time.time(), line))
        f.flush()' "$@" &
  watch_pids+=($!)
}
watch_to "$out/replicas.log" "$KUBECTL" -n "$ns" get deployment triton -w \
  -o 'jsonpath={.spec.replicas}{"\n"}'
watch_to "$out/pod-deletions.log" "$KUBECTL" -n "$ns" get pods -l "$selector" -w \
  -o 'jsonpath={.metadata.name} {.metadata.deletionTimestamp}{"\n"}'
watch_to "$out/hpa.log" "$KUBECTL" -n "$ns" get hpa triton -w -o 'jsonpath={.spec.maxReplicas} '\
'{.status.desiredReplicas} {.status.conditions[?(@.type=="ScalingLimited")].status} '\
'{.status.conditions[?(@.type=="ScalingLimited")].reason}{"\n"}'

if [ "$reconciler" != off ]; then
  log "gpuscale-reconciler ($reconciler)"
  # A scenario may bring its own policy: bench/scenario/policies/NAME.yaml.
  base_policy=$src/bench/scenario/policies/reconciler.yaml
  [ -f "$src/bench/scenario/policies/$name.yaml" ] && base_policy=$src/bench/scenario/policies/$name.yaml
  policy_file=$base_policy
  if [ "$reconciler" = reactive ]; then
    policy_file=$work/policy-reactive.yaml
    python3 - "$base_policy" "$policy_file" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
for p in doc.get("policies", [doc]):
    p["anticipation"] = {"enabled": False}
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
PY
  fi
  "$rec" run --kubeconfig "$KUBECONFIG" --config "$policy_file" \
    --leader-elect-identity bench --leader-elect-namespace default \
    --gpu-mapping="$gpu_mapping" ${prom:+--prometheus-url="$prom"} \
    --health-bind-address "127.0.0.1:$(_as_free_port)" \
    --secure-status-bind-address "127.0.0.1:$(_as_free_port)" >"$work/reconciler.log" 2>&1 &
  rec_pid=$!
fi

has_series() {
  curl -sf "$prom/api/v1/query" --data-urlencode 'query=count(nv_inference_queue_duration_us)' |
    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)'
}
deadline=$((SECONDS + 120))
until has_series; do
  [ $SECONDS -lt $deadline ] || fail "no nv_inference_* series from gpuscale-sim after 120 s: this build of gpuscale-sim has no inference load model"
  sleep 2
done

# One sample: the Prometheus and API state the chart and the summary need.
sample() {
  kc -n "$ns" get deployment triton -o json >"$work/dep.json"
  kc -n "$ns" get hpa triton -o json >"$work/hpa.json"
  kc -n "$ns" get pods -l "$selector" -o json >"$work/pods.json"
  kc get nodes -o json >"$work/nodes.json"
  kc get --raw "/apis/custom.metrics.k8s.io/v1beta1/namespaces/$ns/pods/%2A/avg_time_queue_us" \
    >"$work/adapter.json" 2>/dev/null || echo '{}' >"$work/adapter.json"
  python3 - "$prom" "$ns" "$work" "$sim_addr" <<'PY'
import json, re, sys, urllib.parse, urllib.request
prom, ns, work, sim = sys.argv[1:5]
def quantity(text):  # a Kubernetes quantity as the adapter and the HPA print it ("399300m", "12")
    m = re.fullmatch(r"([0-9.]+)([mkMG]?)", text or "")
    return float(m.group(1)) * {"m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)] if m else None
# Model truth straight from gpuscale-sim: the pattern's clock, the offered load, the queues.
truth = {}
for line in urllib.request.urlopen("http://%s/metrics" % sim, timeout=10).read().decode().splitlines():
    if line.startswith("gpuscale_sim_load_"):
        key, value = line.rsplit(" ", 1)
        truth[key] = float(value)
t = truth.get("gpuscale_sim_load_pattern_seconds", 0.0)
queued = sum(v for k, v in truth.items() if k.startswith("gpuscale_sim_load_pod_queue_length{"))
def q(expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        r = json.load(urllib.request.urlopen(url, timeout=10))["data"]["result"]
        return float(r[0]["value"][1]) if r else None
    except Exception:
        return None
dep, hpa, pods, nodes, adapter = (json.load(open("%s/%s.json" % (work, n)))
                                  for n in ("dep", "hpa", "pods", "nodes", "adapter"))
live = sorted((p for p in pods["items"] if p["status"].get("phase") == "Running"
               and "deletionTimestamp" not in p["metadata"]), key=lambda p: p["metadata"]["name"])
running = [p["metadata"]["name"] for p in live]
restarts = sum(c.get("restartCount", 0) for p in pods["items"]
               for c in p["status"].get("containerStatuses", []))
# What the HPA and `kubectl get --raw` see through the aggregator and the adapter.
current = [m["pods"]["current"].get("averageValue") for m in hpa.get("status", {}).get("currentMetrics") or []
           if m.get("type") == "Pods"]
per_pod = [quantity(i.get("value")) for i in adapter.get("items", [])]
per_pod = [v for v in per_pod if v is not None]
pending = sum(1 for p in pods["items"] if p["status"].get("phase") == "Pending")
cond = {c["type"]: c for c in hpa.get("status", {}).get("conditions", [])}
lim = cond.get("ScalingLimited", {})
sel = 'namespace="%s"' % ns
queue = q('avg(delta(nv_inference_queue_duration_us{%s}[30s])/(1+delta(nv_inference_request_success{%s}[30s])))' % (sel, sel))
# End-to-end request latency the same way: time-slicing can trade queue time for compute time.
latency = q('avg(delta(nv_inference_request_duration_us{%s}[30s])/(1+delta(nv_inference_request_success{%s}[30s])))' % (sel, sel))
reconf = q('sum(gpuscale_sim_mig_reconfigurations_total) or vector(0)')
plugin = q('sum(gpuscale_sim_transitions_total{kind=~".*device.plugin.*"}) or vector(0)')
print(json.dumps({"t": round(t, 1), "load_rps": truth.get("gpuscale_sim_load_offered_rps"),
  "served_rps": q('sum(rate(nv_inference_request_success{%s}[10s]))' % sel), "queued": queued,
  "replicas": dep["spec"]["replicas"], "running": len(running), "pending": pending,
  "ceiling": hpa["spec"]["maxReplicas"], "queue_us": queue, "latency_us": latency,
  "reconfigurations": (reconf or 0) + (plugin or 0), "pods": running,
  "uids": [p["metadata"]["uid"] for p in live], "restarts": restarts,
  "hpa_queue_us": quantity(current[0]) if current else None,
  "adapter_queue_us": sum(per_pod) / len(per_pod) if per_pod else None,
  "node_configs": {n["metadata"]["name"]: {k: n["metadata"].get("labels", {}).get(k, "") for k in
                   ("nvidia.com/mig.config", "nvidia.com/device-plugin.config")} for n in nodes["items"]},
  "limited": lim.get("status") == "True" and lim.get("reason") == "TooManyReplicas"}))
PY
}

total_s=${duration:-$((load_s + tail_s))}
log "running until the pattern's clock reaches ${total_s}s (load ${load_s}s + tail ${tail_s}s, speed $speed), sampling every ${sample_s}s"
wall_cap=$((SECONDS + total_s + 300))
pattern_t() { # the pattern's clock in the last sample (0 before the first)
  python3 -c 'import json,sys
try:
    lines = open(sys.argv[1]).read().splitlines()
    print(int(json.loads(lines[-1])["t"]) if lines else 0)
except (OSError, ValueError, KeyError):
    print(0)' "$out/samples.jsonl"
}
while [ "$(pattern_t)" -lt "$total_s" ]; do
  [ $SECONDS -lt $wall_cap ] || fail "the load pattern did not reach ${total_s}s"
  sample >>"$out/samples.jsonl" || log "a sample failed"
  sleep "$sample_s"
done

kc get events -A -o json >"$out/events.json" || log "could not list Events"
kc -n "$ns" get pods -l "$selector" -o json >"$out/pods-final.json" || log "could not list pods"
kc get nodes -o json >"$out/nodes-final.json" || log "could not list nodes"
kc get configmaps -A -o json >"$out/configmaps-final.json" || log "could not list ConfigMaps"
note="speed $speed; SLO ${slo_us} us; HPA target ${target_us} us; static ceiling $ceiling x $resource"
python3 "$src/bench/scenario/report.py" "$out/samples.jsonl" --scenario "$name" \
  --reconciler "$reconciler" --slo-us "$slo_us" --svg "$out/timeline.svg" --note "$note" \
  --replicas-log "$out/replicas.log" --pods-log "$out/pod-deletions.log" \
  >"$out/result.json"
log "chart: $out/timeline.svg"
cat "$out/result.json"
