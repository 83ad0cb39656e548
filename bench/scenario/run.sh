#!/usr/bin/env bash
# Runs one scenario of bench/scenario on the test control plane and prints, as its LAST line, one
# JSON object: scenario, reconciler, slo_violation_seconds, p50_queue_us, p95_queue_us,
# max_replicas, ceiling_to_capacity_seconds, reconfigurations, pods_disturbed (definitions in
# report.py). Writes OUT/samples.jsonl, OUT/result.json, OUT/timeline.svg, OUT/events.json (every
# Event at the end), OUT/{pods,nodes,configmaps}-final.json and the logs (OUT/run/).
#
#   bench/scenario/run.sh NAME --reconciler off|reactive|on [--speed N] [--out DIR] [--slo-us N]
#                         [--resource NAME] [--tail SECONDS] [--sample SECONDS] [--duration SECONDS]
#                         [--only SERVICE] [--target-waiting N] [--least-privilege]
# --reconciler: off (static partitioning), reactive (acts once the HPA is held at its ceiling),
# on (the policy default: also ahead of the ceiling, from the HPA's trend).
# --least-privilege: the reconciler runs as it does in a cluster, with the ServiceAccount token,
# RBAC and admission policies of manifests/reconciler (tests/e2e/lib/reconciler_identity.sh; its
# Lease and state in gpuscale) instead of the admin kubeconfig.
# --duration caps the scenario time sampled (default: the load pattern's end + --tail, 90 s).
# --speed N runs the load pattern's clock N times faster (requests are still served in real time).
# --only SERVICE: of a `services:` scenario, create only this service's Deployment and HPA (the
# others' load finds no pod): the service alone on the pool.
# --slo-us: the queue-time SLO (default 1 s; 20 ms for t4-* scenarios, 4 s for vllm-* ones);
# --target-us: the HPA's averageValue for avg_time_queue_us (default a quarter of the SLO: queue time
# is ~0 below capacity and explodes near it, so an HPA aiming at the SLO itself runs the pods at the
# edge). A vLLM workload (workload.server: vllm) is scaled on vllm_num_requests_waiting instead, with
# averageValue --target-waiting (default 1 request waiting per pod).
# Binaries: $GPUSCALE_BINARY_DIR/bin (default build/bin), or GPUSCALE_{SIM,ADAPTER,RECONCILER}_BIN;
# GPUSCALE_EXTRA_SCRAPE=HOST:PORT adds a scrape target (another exporter);
# GPUSCALE_SCENARIO_EXTRA=FILE applies more objects once the reconciler runs.
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
# ceiling. With `workload.server: vllm` the Deployment is `vllm`, the adapter serves rules/vllm.yaml
# and the HPA scales on vllm_num_requests_waiting (--target-waiting); the container's arguments are
# the scenario's workload.args either way. `workload.scaler: keda` gives a KEDA ScaledObject
# instead of the HPA (its operator and metrics server run; the samples read its HPA keda-hpa-NAME);
# `workload.kind: LeaderWorkerSet` + `size: N` the custom resource of LeaderWorkerSet's shape
# instead of the Deployment, N pods per replica, the ceiling in groups (bench/scenario/lib);
# `workload.scaler: planner` no HPA but an external planner process (lib/planner.py) that scales the
# Deployment on the same signal and target, as far as its GPUCapacityRequest's grant (reconciler
# on|reactive) or the partitions it sees (off); the samples' ceiling is then that limit, and
# OUT/request.log watches the request (spec.replicas, status.grantedReplicas). A `services:` scenario gets that per service, named after it, with the service's SLO
# (sloSeconds, else --slo-us) and target (a quarter of it), a PriorityClass `scenario-SERVICE`
# (value = the service's priority, preemptionPolicy Never) for its pods and a policy named after
# the service (a copy of the policy file's first policy with the service's priority); the result
# JSON then adds `services` (report.py) and OUT/SERVICE-*.log hold the per-service watches. A
# service's own `workload.claim` makes its pods request through claims (lib/dra.sh) beside
# services of device-plugin requests; each HPA's static ceiling is what its own request can get.
# Policy file: bench/scenario/policies/NAME.yaml when it exists, else policies/reconciler.yaml.
# Exit: 0 with a result; 1 when a part fails (the JSON then carries "error"); 2 usage; 77 parts
# missing.
set -euo pipefail

usage() { sed -n '7,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
name=$1
shift
reconciler= speed=1 out= slo_us= target_us= resource= tail_s=90 sample_s=2 duration= only=
target_waiting=1
least_privilege=false
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
    --only) only=$2; shift 2 ;;
    --target-waiting) target_waiting=$2; shift 2 ;;
    --least-privilege) least_privilege=true; shift ;;
    *) usage ;;
  esac
done
case $reconciler in on | reactive | off) ;; *) usage ;; esac
# Queue-time SLOs: ~1 s for the A100 scenarios (a request takes ~0.35-0.9 s of a 1g slice), 20 ms
# on the T4s (a few ms per request).
# vLLM requests take ~1.5 s of a slice: 4 s.
case $name in
  t4-*) slo_us=${slo_us:-20000} ;;
  vllm-*) slo_us=${slo_us:-4000000} ;;
  *) slo_us=${slo_us:-1000000} ;;
esac
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
# shellcheck source=lib/workload.sh
source "$src/bench/scenario/lib/workload.sh"
workload_init "$scenario"
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

out=${out:-$src/bench/scenario/results/$name-reconciler-$reconciler${only:+-only-$only}}
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
  workload_stop
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

# What the scenario says: its services, the load length (the longest service's), the partition
# resource (workload.resource, else 1g.5gb slices on mixed-strategy MIG nodes, else
# nvidia.com/gpu), the reconciler's --gpu-mapping (reconciler.gpuMapping), the Deployments'
# nodeSelector (workload.nodeSelector, as JSON) and the inference server (workload.server); the
# container's arguments (workload.args) go to $work/container-args.json. The services go to $work/services.tsv
# ('|'-separated, for this script) and $work/services.json (for sample.py and report.py); a single
# `load:` is the service `triton` (`vllm` for a vLLM workload) without a priority.
read -r load_s default_resource gpu_mapping scale_down_type scale_down_value \
  scale_down_period scale_down_window node_selector scale_up server < <(python3 - "$scenario" "$work" \
  "$slo_us" "$target_us" "$only" "$out" <<'PY'
import json, sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
work, slo_us, target_us, only, out = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
workload = s.get("workload") or {}
server = workload.get("server", "triton")
json.dump([str(a) for a in workload.get("args") or []], open(work + "/container-args.json", "w"))
down = (s.get("hpa") or {}).get("scaleDown") or {}
up = (s.get("hpa") or {}).get("scaleUp")
services = []
if s.get("services"):
    for sv in s["services"]:
        slo = round(float(sv["sloSeconds"]) * 1e6) if "sloSeconds" in sv else slo_us
        services.append({"name": sv["name"], "load": sv["load"], "slo_us": slo,
                         "target_us": slo // 4 if "sloSeconds" in sv else target_us,
                         "priority": int(sv.get("priority", 0)), "policy": sv["name"],
                         "log_prefix": sv["name"] + "-"})
else:
    services.append({"name": server, "load": s.get("load") or {}, "slo_us": slo_us,
                     "target_us": target_us, "priority": None, "policy": "default", "log_prefix": ""})
if only and only not in [sv["name"] for sv in services]:
    sys.exit("--only %s: the scenario has no such service" % only)
length = 0
for sv in services:
    p = sv["load"].get("pattern") or {}
    length = max(length, float(p.get("startSeconds", 0)) + float(p.get("durationSeconds", 0)))
    sv["namespace"] = sv["load"].get("namespace", "default")
    sv["selector"] = sv["load"].get("podSelector", "app=triton")
    sv["replicas_log"] = "%s/%sreplicas.log" % (out, sv["log_prefix"])
    sv["pods_log"] = "%s/%spod-deletions.log" % (out, sv["log_prefix"])
    sv["server"] = server
    del sv["load"]
services = [sv for sv in services if not only or sv["name"] == only]
json.dump(services, open(work + "/services.json", "w"))
with open(work + "/services.tsv", "w") as f:
    for sv in services:
        f.write("|".join(str(v) for v in (sv["name"], sv["namespace"], sv["selector"],
                sv["target_us"], "" if sv["priority"] is None else sv["priority"], sv["policy"],
                sv["log_prefix"])) + "\n")
node = s["nodes"][0]
mig = node.get("migStrategy") == "mixed"
def scale_up_json(up):
    """hpa.scaleUp as the HPA's behavior.scaleUp (flow YAML); "-" when absent: the default."""
    if up is None:
        return "-"
    up = up or {}
    given = [("Percent", up["percent"])] if "percent" in up else []
    given += [("Pods", up["pods"])] if "pods" in up else []
    period = up.get("periodSeconds", 15)
    policies = [{"type": t, "value": v, "periodSeconds": period}
                for t, v in (given or [("Percent", 100), ("Pods", 4)])]
    return json.dumps({"stabilizationWindowSeconds": up.get("stabilizationWindowSeconds", 0),
                       "selectPolicy": "Max", "policies": policies}, separators=(",", ":"))
print(int(length),
      workload.get("resource") or ("nvidia.com/mig-1g.5gb" if mig else "nvidia.com/gpu"),
      (s.get("reconciler") or {}).get("gpuMapping", "node"),
      "Percent" if "percent" in down else "Pods", down.get("percent", down.get("pods", 1)),
      down.get("periodSeconds", 15), down.get("stabilizationWindowSeconds", 30),
      json.dumps(workload.get("nodeSelector") or {}, separators=(",", ":")),
      scale_up_json(up), server)
PY
)
[ -n "${load_s:-}" ] || fail "cannot read the scenario's services (--only names a service?)"
plugin_resource=${resource:-$default_resource}
# A workload of ResourceClaims (workload.claim, or a service's own) instead of $resource: lib/dra.sh.
# shellcheck source=lib/dra.sh
source "$src/bench/scenario/lib/dra.sh"
service_gpu() { # [service]: what its pods request ($resource, $container_resources)
  dra_init "$scenario" "${1:-}" || fail "cannot read workload.claim"
  resource=$plugin_resource pod_claims=
  container_resources="{requests: {$resource: \"1\"}, limits: {$resource: \"1\"}}"
  if dra_enabled; then
    resource=$(dra_resource_note)
    container_resources="{claims: [{name: gpu}]}"
  fi
}
service_gpu
# What the HPA scales on, from which series: Triton's queue time or vLLM's waiting requests.
if [ "$server" = vllm ]; then
  hpa_metric=vllm_num_requests_waiting first_series='vllm:num_requests_waiting'
else
  hpa_metric=avg_time_queue_us first_series=nv_inference_queue_duration_us
fi
container_args=$(cat "$work/container-args.json")
# The scenario's services: name, namespace, pod selector, HPA target, priority ("" for a single
# load), policy, log prefix.
mapfile -t service_lines <"$work/services.tsv"
multi=false
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["priority"] is not None)' \
  "$work/services.json")" = True ] && multi=true

log "cluster up ($name, reconciler $reconciler)"
"$src/tests/cluster/up.sh" "$work/cluster" --scenario "$scenario" >"$work/up.log" 2>&1 ||
  fail "tests/cluster/up.sh failed (see $work/up.log)"
# shellcheck disable=SC1091
source "$work/cluster/env"
export KUBECTL=$bin/kubectl
kc() { "$KUBECTL" "$@"; }

log "gpuscale-sim run"
workload_before_sim || fail "the LeaderWorkerSet CRD"
"$sim" run --scenario "$scenario" --kubeconfig "$KUBECONFIG" --resync 1 --listen 127.0.0.1:0 \
  --port-file "$work/sim.port" --speed "$speed" --seed "${GPUSCALE_SEED:-1}" \
  "${workload_sim_args[@]}" >"$work/sim.log" 2>&1 &
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
adapter_stack_init "$work" "$adapter" "$src/rules/$server.yaml"
adapter_stack_identity || fail "adapter identity"
adapter_stack_certificate || fail "adapter certificate"
adapter_stack_start "$prom" || fail "the adapter did not start"
adapter_stack_register || fail "APIServices not Available"
workload_start "$work" || fail "KEDA did not start"

allocatable() {
  if dra_enabled; then dra_allocatable; return; fi
  kc get nodes -o json | python3 -c '
import json, sys
r = sys.argv[1]
print(sum(int(n["status"].get("allocatable", {}).get(r, "0")) for n in json.load(sys.stdin)["items"]))' "$resource"
}
positive() { [ "$(allocatable)" -gt 0 ]; }
wait_until 120 "allocatable $resource" positive
ceiling=$(($(allocatable) / workload_group_size))

# Per service: its Deployment (one unit of $resource per pod), its HPA and, in a `services:`
# scenario, the PriorityClass of its pods.
create_service() { # name namespace selector target priority policy
  local svc=$1 ns=$2 selector=$3 target=$4 priority=$5 policy=$6
  local key=${selector%%=*} value=${selector#*=} priority_class= annotation= scale_up_line=
  if [ "$server" = vllm ]; then target=$target_waiting; fi
  log "Deployment $svc ($resource: 1 per pod) and its HPA (max $ceiling, $hpa_metric $target)"
  kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null
  wait_until 60 "default service account" kc -n "$ns" get serviceaccount default -o name
  if dra_enabled; then
    dra_template "$ns" "$svc"
    pod_claims="resourceClaims: [{name: gpu, resourceClaimTemplateName: $svc-gpu}]"
  fi
  [ "$reconciler" = off ] || annotation="annotations: {gpuscale.io/partition-policy: $policy}"
  [ "$scale_up" = - ] || scale_up_line="scaleUp: $scale_up"
  if [ -n "$priority" ]; then
    priority_class="priorityClassName: scenario-$svc"
    kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: scenario-$svc}
value: $priority
preemptionPolicy: Never
description: priority of the scenario service $svc (pending pods only; nothing is preempted)
YAML
  fi
  workload_objects "$ns" "$prom" <<YAML | kc -n "$ns" apply -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: $svc}
spec:
  replicas: 1
  selector: {matchLabels: {$key: $value}}
  template:
    metadata: {labels: {$key: $value}}
    spec:
      $priority_class
      $pod_claims
      nodeSelector: $node_selector
      tolerations: [{operator: Exists}]
      containers:
      - name: $server
        image: registry.invalid/$server:never-pulled
        args: $container_args
        resources: $container_resources
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: $svc
  $annotation
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: $svc}
  minReplicas: 1
  maxReplicas: $ceiling
  # Queue time is ~0 below capacity, so the HPA's proportional rule would drop to 1 replica in one
  # step and overload again; scale in by the scenario's hpa.scaleDown (default one pod per 15 s).
  # Scale out by its hpa.scaleUp when it has one, else by the controller's default.
  behavior:
    $scale_up_line
    scaleDown:
      stabilizationWindowSeconds: $scale_down_window
      policies: [{type: $scale_down_type, value: $scale_down_value, periodSeconds: $scale_down_period}]
  metrics:
  - type: Pods
    pods:
      metric: {name: $hpa_metric}
      target: {type: AverageValue, averageValue: "$target"}
YAML
}

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
ceilings=()
for line in "${service_lines[@]}"; do
  IFS='|' read -r svc ns selector target priority policy prefix <<<"$line"
  if $multi; then # each service its own request and static ceiling
    service_gpu "$svc"
    wait_until 120 "allocatable $resource" positive
    ceiling=$(($(allocatable) / workload_group_size))
    ceilings+=("$svc $ceiling x $resource")
  fi
  create_service "$svc" "$ns" "$selector" "$target" "$priority" "$policy"
  workload_created "$ns" "$svc" "$target" "$policy" || fail "$svc: no KEDA HPA or no planner"
  watch_to "$out/${prefix}replicas.log" "$KUBECTL" -n "$ns" get "$workload_resource" "$svc" -w \
    -o 'jsonpath={.spec.replicas}{"\n"}'
  watch_to "$out/${prefix}pod-deletions.log" "$KUBECTL" -n "$ns" get pods -l "$selector" -w \
    -o 'jsonpath={.metadata.name} {.metadata.deletionTimestamp}{"\n"}'
  if [ "$workload_scaler" = planner ]; then
    [ "$reconciler" = off ] || watch_to "$out/${prefix}request.log" "$KUBECTL" -n "$ns" get \
      gpucapacityrequest "$svc" -w -o 'jsonpath={.spec.replicas} {.status.grantedReplicas}{"\n"}'
    continue
  fi
  watch_to "$out/${prefix}hpa.log" "$KUBECTL" -n "$ns" get hpa "$hpa_prefix$svc" -w -o 'jsonpath={.spec.maxReplicas} '\
'{.status.desiredReplicas} {.status.conditions[?(@.type=="ScalingLimited")].status} '\
'{.status.conditions[?(@.type=="ScalingLimited")].reason}{"\n"}'
done

if [ "$reconciler" != off ]; then
  log "gpuscale-reconciler ($reconciler)"
  policy_file=$src/bench/scenario/policies/$name.yaml
  [ -f "$policy_file" ] || policy_file=$src/bench/scenario/policies/reconciler.yaml
  if [ "$reconciler" = reactive ] || $multi; then
    python3 - "$policy_file" "$work/policy.yaml" "$reconciler" "$work/services.json" <<'PY'
import copy, json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
policies = doc.get("policies", [doc])
# A service scenario: one policy per service, a copy of the first with the service's priority.
services = [s for s in json.load(open(sys.argv[4])) if s["priority"] is not None]
if services:
    base = policies[0]
    policies = [dict(copy.deepcopy(base), name=s["policy"], priority=s["priority"]) for s in services]
if sys.argv[3] == "reactive":
    for p in policies:
        p["anticipation"] = {"enabled": False}
yaml.safe_dump({"policies": policies}, open(sys.argv[2], "w"), sort_keys=False)
PY
    policy_file=$work/policy.yaml
  fi
  rec_kubeconfig=$KUBECONFIG rec_namespace=default
  if $least_privilege; then
    # shellcheck source=../../tests/e2e/lib/reconciler_identity.sh
    source "$src/tests/e2e/lib/reconciler_identity.sh"
    reconciler_identity "$work/reconciler.kubeconfig" || fail "the reconciler's identity"
    rec_kubeconfig=$work/reconciler.kubeconfig rec_namespace=gpuscale
  fi
  "$rec" run --kubeconfig "$rec_kubeconfig" --policy "$policy_file" \
    --leader-elect-identity bench --leader-elect-namespace "$rec_namespace" \
    --gpu-mapping="$gpu_mapping" ${prom:+--prometheus-url="$prom"} \
    --health-bind-address "127.0.0.1:$(_as_free_port)" \
    --secure-status-bind-address "127.0.0.1:$(_as_free_port)" >"$work/reconciler.log" 2>&1 &
  rec_pid=$!
fi

# GPUSCALE_SCENARIO_EXTRA=FILE: more objects (another tenant's, say), applied once the reconciler
# runs; retried while a namespace the file creates gets its service account.
if [ -n "${GPUSCALE_SCENARIO_EXTRA:-}" ]; then
  log "extra objects from $GPUSCALE_SCENARIO_EXTRA"
  wait_until 60 "extra objects applied" kc apply -f "$GPUSCALE_SCENARIO_EXTRA"
fi

has_series() {
  curl -sf "$prom/api/v1/query" --data-urlencode "query=count($first_series)" |
    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)'
}
deadline=$((SECONDS + 120))
until has_series; do
  [ $SECONDS -lt $deadline ] || fail "no $first_series series from gpuscale-sim after 120 s: this build of gpuscale-sim has no inference load model"
  sleep 2
done

# One sample (bench/scenario/sample.py): the Prometheus, model and API state the chart and the
# summary need.
sample() {
  local line svc ns selector query
  kc get nodes -o json >"$work/nodes.json"
  for line in "${service_lines[@]}"; do
    IFS='|' read -r svc ns selector _ <<<"$line"
    kc -n "$ns" get "$workload_resource" "$svc" -o json >"$work/$svc-dep.json"
    if [ "$workload_scaler" = planner ]; then # sample.py reads $svc-planner.json instead
      echo '{}' >"$work/$svc-hpa.json"
    else
      kc -n "$ns" get hpa "$hpa_prefix$svc" -o json >"$work/$svc-hpa.json"
    fi
    kc -n "$ns" get pods -l "$selector" -o json >"$work/$svc-pods.json"
    # What the HPA asks the adapter (a service scenario: for the service's pods only).
    query=
    $multi && query="?labelSelector=$(python3 -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1], safe=""))' "$selector")"
    kc get --raw "/apis/custom.metrics.k8s.io/v1beta1/namespaces/$ns/pods/%2A/$hpa_metric$query" \
      >"$work/$svc-adapter.json" 2>/dev/null || echo '{}' >"$work/$svc-adapter.json"
  done
  python3 "$src/bench/scenario/sample.py" "$prom" "$work" "$sim_addr"
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
kc get nodes -o json >"$out/nodes-final.json" || log "could not list nodes"
kc get configmaps -A -o json >"$out/configmaps-final.json" || log "could not list ConfigMaps"
note="speed $speed; SLO ${slo_us} us; HPA target ${target_us} us; static ceiling $ceiling x $resource"
if [ "$server" = vllm ]; then
  note="speed $speed; SLO ${slo_us} us; HPA target $target_waiting requests waiting per pod; static ceiling $ceiling x $resource"
fi
[ "$workload_group_size" = 1 ] || note+=" groups of $workload_group_size"
[ "$workload_scaler" = hpa ] || note+="; scaled by $workload_scaler"
if $multi; then
  kc get pods -A -o json >"$out/pods-final.json" || log "could not list pods"
  note="speed $speed; SLO and HPA target per service; static ceiling $(IFS=';'; echo "${ceilings[*]}" | sed 's/;/; /g')"
  report_args=(--services "$work/services.json")
else
  IFS='|' read -r _ ns selector _ <<<"${service_lines[0]}"
  kc -n "$ns" get pods -l "$selector" -o json >"$out/pods-final.json" || log "could not list pods"
  report_args=(--replicas-log "$out/replicas.log" --pods-log "$out/pod-deletions.log"
    --group-size "$workload_group_size")
  if [ "$workload_scaler" != planner ]; then
    report_args+=(--hpa-log "$out/hpa.log")
  else
    report_args+=(--ceiling-label "planner's limit")
    [ "$reconciler" = off ] || report_args+=(--request-log "$out/request.log")
  fi
fi
python3 "$src/bench/scenario/report.py" "$out/samples.jsonl" --scenario "$name" \
  --reconciler "$reconciler" --slo-us "$slo_us" --svg "$out/timeline.svg" --note "$note" \
  "${report_args[@]}" >"$out/result.json"
log "chart: $out/timeline.svg"
cat "$out/result.json"
