# Sourced by the shell end-to-end tests (tests/e2e/*/*_test.sh): what every one of them needs, so a
# test reads as its story. These names are a stable interface for every e2e script; change them
# only together with all callers.
#
# Set-up and tear-down
#   e2e_init NAME               sets src, build, cluster (tests/cluster), bin (its binaries,
#                               $GPUSCALE_CLUSTER_BIN), sim (gpuscale-sim, $GPUSCALE_SIM) and work
#                               (a new temporary directory gpuscale-NAME.XXXXXX); installs the EXIT
#                               trap below
#   e2e_require FILE...         exit 77 (ctest: skipped) unless every FILE is executable
#   e2e_require_cluster         e2e_require for the control-plane binaries (tests/cluster/build.sh)
#   e2e_cluster_up [ARGS...]    tests/cluster/up.sh "$work/cluster" ARGS, then sources its env
#                               (KUBECONFIG, GPUSCALE_*) and exports KUBECTL
#   kc ARGS...                  kubectl against that cluster
#   e2e_spawn LOG CMD...        runs CMD in the background, output appended to LOG; sets SPAWNED_PID;
#                               the process is stopped (SIGTERM) at exit unless e2e_stop reaped it
#   e2e_stop PID [SIGNAL]       sends SIGNAL (default TERM) to PID, waits for it and returns its exit
#                               status; it is no longer stopped at exit
#   e2e_on_exit COMMAND         a command string eval'd at exit, before the cluster stops (the last
#                               registered runs first)
#   e2e_show_on_failure PATH... files (globs allowed, expanded at exit) whose last 30 lines are
#                               printed when the test fails
# At exit: spawned processes stop, e2e_on_exit commands run, the cluster stops (down.sh) and no
# process of it may survive, nor any process the test started (its background jobs, or anything
# whose command line names the work directory; 10 s of grace, then killed and the test fails); on
# success the work directory is removed, on failure it is kept and
# the registered logs are shown (a skip, 77, removes it too). A failing tear-down fails a passing
# test.
#
# Checks
#   step TEXT...                prints "== HH:MM:SS [Ns] TEXT" (wall clock and seconds since start)
#   die TEXT...                 prints "FAIL: TEXT" on stderr and exits 1
#   eventually SECS WHAT CMD... runs CMD every $E2E_POLL seconds (default 1) until it succeeds; dies
#                               "timed out after SECS s: WHAT" when it has not by then. Waits are
#                               generous: the tests run in CI on 2 loaded cores.
#   holds SECS WHAT CMD...      CMD keeps succeeding for SECS seconds (checked every $E2E_POLL s);
#                               dies "WHAT" at the first failure
#   free_port                   prints a free loopback TCP port
#
# Cluster objects (kubectl through kube-apiserver)
#   node_label NODE KEY         the label's value (empty when unset)
#   node_allocatable NODE RES   status.allocatable[RES]
#   annotation KIND NAME KEY    metadata.annotations[KEY] of KIND/NAME in the current namespace
#   event_reasons NAME          the reasons of every Event (all namespaces) whose involved object is
#                               NAME, one a line
#   expect_event NAME REASON    an Event REASON about NAME shows up within 15 s
#
# KWOK workloads
#   e2e_kwok_node NAME          a Node that KWOK runs (no kubelet), roomy, labelled
#                               kubernetes.io/hostname=NAME
#   e2e_web_deployment NS REPLICAS NODE  the Deployment `web` (pods labelled app=web) on NODE, an
#                               image that is never pulled
#   e2e_running NS SELECTOR     how many pods of SELECTOR in NS are Running
#
# The inference workload
#   e2e_triton_deployment       applies the Deployment `triton` in default: 1 replica on the GPU nodes
#                               (nvidia.com/gpu.present, any taint tolerated), one nvidia.com/mig-1g.5gb
#                               per pod, an image that is never pulled (KWOK runs the pods)
#   e2e_triton_hpa POLICY       applies the HPA `triton` in default: Deployment triton, Pods metric
#                               avg_time_queue_us at averageValue 50, 1..7 replicas, opted in to the
#                               partition policy POLICY
#
# gpuscale-sim (the GPU Operator emulator)
#   e2e_start_sim SCENARIO [ARGS...]  gpuscale-sim run against the cluster (log: $work/sim.log);
#                               sets SIM_PID and SIM_URL and returns once /healthz answers
#
# Checks die on failure; queries return kubectl's status. Callers run under `set -euo pipefail`.

E2E_POLL=${E2E_POLL:-1}
E2E_PIDS=()
_e2e_on_exit=()
_e2e_logs=()

e2e_init() { # name
  src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
  build=${GPUSCALE_BINARY_DIR:-$src/build}
  cluster=$src/tests/cluster
  bin=${GPUSCALE_CLUSTER_BIN:-$cluster/bin}
  sim=${GPUSCALE_SIM:-$build/bin/gpuscale-sim}
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-$1.XXXXXX")
  trap _e2e_exit EXIT
}

e2e_require() { # file...
  local f
  for f in "$@"; do
    if [ ! -x "$f" ]; then
      echo "skip: $f not built or installed (tests/cluster/build.sh builds the cluster binaries)"
      exit 77
    fi
  done
}

e2e_require_cluster() {
  e2e_require "$bin"/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kubectl,kwok}
}

e2e_cluster_up() { # [up.sh args...]
  "$cluster/up.sh" "$work/cluster" "$@"
  # shellcheck disable=SC1091
  source "$work/cluster/env"
  export KUBECTL=$bin/kubectl
}

kc() { "$bin/kubectl" "$@"; }

e2e_spawn() { # log command...
  local log=$1
  shift
  "$@" >>"$log" 2>&1 &
  SPAWNED_PID=$!
  E2E_PIDS+=("$SPAWNED_PID")
}

e2e_stop() { # pid [signal]
  local pid=$1 p rc=0 left=()
  for p in "${E2E_PIDS[@]}"; do [ "$p" = "$pid" ] || left+=("$p"); done
  E2E_PIDS=("${left[@]}")
  kill "-${2:-TERM}" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || rc=$?
  return $rc
}

e2e_on_exit() { _e2e_on_exit+=("$1"); }

e2e_show_on_failure() { _e2e_logs+=("$@"); }

_e2e_exit() {
  local rc=$? i p f
  set +e
  for p in "${E2E_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${E2E_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  for ((i = ${#_e2e_on_exit[@]} - 1; i >= 0; i--)); do eval "${_e2e_on_exit[$i]}"; done
  if [ -d "$work/cluster" ]; then
    if ! "$cluster/down.sh" "$work/cluster"; then
      echo "FAIL: down.sh failed" >&2
      [ $rc -ne 0 ] || rc=1
    fi
    if pgrep -f -- "$work/cluster" >/dev/null; then
      echo "FAIL: processes of this cluster survived down.sh" >&2
      [ $rc -ne 0 ] || rc=1
    fi
  fi
  if ! _e2e_no_survivors; then
    [ $rc -ne 0 ] || rc=1
  fi
  if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then
    rm -rf "$work"
  else
    # Keep the logs, not the images and container layers: failed runs must not fill the disk.
    find "$work" -xdev -type f -size +8M -delete 2>/dev/null
    echo "FAILED (rc=$rc); logs kept in $work" >&2
    for p in "${_e2e_logs[@]}"; do
      # shellcheck disable=SC2086 # the registered patterns are globs
      for f in $p; do
        [ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 30 "$f" >&2; }
      done
    done
  fi
  exit $rc
}

# The processes this test started that still run: its own background jobs, and any process whose
# command line names its work directory (what a helper started for it in the background).
_e2e_survivors() {
  local p candidates
  # jobs -p in this shell, not in a pipeline: a pipeline's subshell has no job table.
  candidates="$(jobs -p) $(pgrep -f -- "$work/")"
  for p in $candidates; do
    # A zombie has ended; its parent has not reaped it yet.
    case "$(ps -o stat= -p "$p" 2>/dev/null)" in
    "" | Z*) ;;
    *) [ "$p" != "$$" ] && echo "$p" ;;
    esac
  done | sort -u
}

# A test that leaves a process running fails: it would hold ports, files or CPU of the next test.
# Processes get 10 s to finish the stop they were sent; whatever still runs is listed and killed.
_e2e_no_survivors() {
  local left deadline=$((SECONDS + 10))
  left=$(_e2e_survivors)
  while [ -n "$left" ] && [ $SECONDS -lt $deadline ]; do
    sleep 0.5
    left=$(_e2e_survivors)
  done
  [ -z "$left" ] && return 0
  echo "FAIL: processes started by this test outlived it (killed now):" >&2
  # shellcheck disable=SC2086 # one pid a word
  ps -o pid=,args= -p $(echo $left | tr ' ' ',') >&2
  # shellcheck disable=SC2086
  kill -KILL $left 2>/dev/null
  return 1
}

step() { echo "== $(date -u +%H:%M:%S) [${SECONDS}s] $*"; }

die() {
  echo "FAIL: $*" >&2
  exit 1
}

eventually() { # seconds description command...
  local limit=$1 deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || die "timed out after $limit s: $what"
    sleep "$E2E_POLL"
  done
}

holds() { # seconds description command...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  while [ $SECONDS -lt $deadline ]; do
    "$@" || die "$what"
    sleep "$E2E_POLL"
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# GET PATH from a gpuscale-reconciler's secure status listener (--secure-status-bind-address) on
# PORT as the cluster admin: a client certificate of group system:masters, so no
# SubjectAccessReview is needed. More curl arguments may follow.
rec_status() { # port path [curl args...]
  local port=$1 path=$2
  shift 2
  curl -sfk --max-time 10 --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" "$@" \
    "https://127.0.0.1:$port$path"
}

node_label() { kc get node "$1" -o jsonpath="{.metadata.labels.${2//./\\.}}"; }
node_allocatable() { kc get node "$1" -o jsonpath="{.status.allocatable.${2//./\\.}}"; }
annotation() { kc get "$1" "$2" -o jsonpath="{.metadata.annotations.${3//./\\.}}"; }
event_reasons() {
  kc get events -A --field-selector "involvedObject.name=$1" \
    -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}'
}
_e2e_has_event() { event_reasons "$1" | grep -qx -- "$2"; }
expect_event() { eventually 15 "$2 event on $1" _e2e_has_event "$1" "$2"; }

# What of gpuscale the cluster's nodes and HPAs carry: gpuscale.io/ keys (but the owners' policy
# choice), reshape taints, the state store ConfigMap in STATE_NS (default gpuscale) and, unless
# CONFIG_LABELS is "keep", node labels naming gpuscale's configs. Empty: no trace.
traces() { # [STATE_NS] [CONFIG_LABELS]
  {
    kc get nodes,hpa -A -o json
    echo
    kc get configmap -n "${1:-gpuscale}" gpuscale-reconciler-state -o json 2>/dev/null || true
  } | CONFIG_LABELS=${2:-} python3 -c '
import json, os, sys
decoder, text, objects = json.JSONDecoder(), sys.stdin.read(), []
while text.strip():
    obj, end = decoder.raw_decode(text.strip())
    objects += obj.get("items", [obj])
    text = text.strip()[end:]
for o in objects:
    m, what = o["metadata"], o["kind"] + " " + o["metadata"]["name"]
    if o["kind"] == "ConfigMap":
        print(what)
        continue
    for k in list(m.get("labels", {})) + list(m.get("annotations", {})):
        if k.startswith("gpuscale.io/") and k != "gpuscale.io/partition-policy":
            print(what, k)
    for k, v in m.get("labels", {}).items():
        if k.startswith("nvidia.com/") and v.startswith("gpuscale-") and os.environ["CONFIG_LABELS"] != "keep":
            print(what, k, v)
    for t in o.get("spec", {}).get("taints", []) or []:
        if t["key"].startswith("gpuscale.io/"):
            print(what, "taint", t["key"])
'
}
no_traces() { # [STATE_NS] [CONFIG_LABELS]
  local t
  t=$(traces "$@")
  [ -z "$t" ] || { echo "$t" >&2; return 1; }
}

e2e_start_sim() { # scenario [args...]
  local scenario=$1
  shift
  rm -f "$work/sim.port"
  e2e_spawn "$work/sim.log" "$sim" run --scenario "$scenario" \
    --kubeconfig "$KUBECONFIG" --listen 127.0.0.1:0 --port-file "$work/sim.port" "$@"
  SIM_PID=$SPAWNED_PID
  eventually 30 "gpuscale-sim port file" test -s "$work/sim.port"
  SIM_URL=http://127.0.0.1:$(cat "$work/sim.port")
  eventually 60 "gpuscale-sim /healthz" curl -sf "$SIM_URL/healthz" -o /dev/null
}

# e2e_hpa NS NAME MIN MAX [METRIC TARGET]: applies an autoscaling/v2 HPA NAME scaling the Deployment
# NAME between MIN and MAX replicas on the Pods metric METRIC at the average TARGET; without METRIC,
# its metrics (the items under `metrics:`, indented two spaces) come on stdin.
e2e_hpa() {
  local ns=$1 name=$2 min=$3 max=$4
  {
    printf 'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: %s}\nspec:\n' "$name"
    printf '  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %s}\n' "$name"
    printf '  minReplicas: %s\n  maxReplicas: %s\n  metrics:\n' "$min" "$max"
    if [ $# -ge 6 ]; then
      printf '  - type: Pods\n    pods:\n      metric: {name: %s}\n' "$5"
      printf '      target: {type: AverageValue, averageValue: "%s"}\n' "$6"
    else
      cat
    fi
  } | kc -n "$ns" apply -f -
}

# e2e_triton_hpa POLICY [NAMESPACE [LABELS]]: the HPA triton (1 to 7 replicas of the Deployment
# triton on avg_time_queue_us) under the partition policy POLICY, in NAMESPACE (default: default),
# with LABELS (a YAML flow map such as "{team: a}") when given.
e2e_triton_hpa() {
  kc -n "${2:-default}" apply -f - <<YAML
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: triton
  ${3:+labels: $3}
  annotations: {gpuscale.io/partition-policy: $1}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: triton}
  minReplicas: 1
  maxReplicas: 7
  metrics:
  - type: Pods
    pods:
      metric: {name: avg_time_queue_us}
      target: {type: AverageValue, averageValue: "50"}
YAML
}

# e2e_deployment NS NAME REPLICAS: applies a Deployment NAME whose pods carry app=NAME; its pod spec
# (the keys under the template's `spec:`, indented six spaces) comes on stdin.
e2e_deployment() {
  local ns=$1 name=$2 replicas=$3
  {
    printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n' "$name"
    printf '  replicas: %s\n  selector: {matchLabels: {app: %s}}\n' "$replicas" "$name"
    printf '  template:\n    metadata: {labels: {app: %s}}\n    spec:\n' "$name"
    cat
  } | kc -n "$ns" apply -f -
}

e2e_kwok_node() { # name
  kc apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {$GPUSCALE_KWOK_NODE_ANNOTATION: "$GPUSCALE_KWOK_NODE_ANNOTATION_VALUE"}
  labels: {kubernetes.io/hostname: $1, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  capacity: {cpu: "10000", memory: 40Ti, pods: "10000"}
  allocatable: {cpu: "10000", memory: 40Ti, pods: "10000"}
NODE
}

e2e_web_deployment() { # namespace replicas node
  e2e_deployment "$1" web "$2" >/dev/null <<DEPLOYMENT
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      nodeSelector: {kubernetes.io/hostname: $3}
      containers: [{name: main, image: registry.invalid/never-pulled:1, resources: {requests: {cpu: 1m}}}]
DEPLOYMENT
}

e2e_running() { # namespace selector
  kc -n "$1" get pods -l "$2" --field-selector=status.phase=Running -o name | wc -l
}

e2e_triton_deployment() {
  e2e_deployment default triton 1 <<YAML
      nodeSelector: {nvidia.com/gpu.present: "true"}
      tolerations: [{operator: Exists}]
      containers:
      - name: triton
        image: registry.invalid/tritonserver:never-pulled
        resources: {limits: {nvidia.com/mig-1g.5gb: 1}}
YAML
}
