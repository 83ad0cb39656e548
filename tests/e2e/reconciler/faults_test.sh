#!/usr/bin/env bash
# gpuscale-reconciler under API faults on the real control plane (tests/cluster) with gpuscale-sim as
# the GPU Operator (faults_scenario.yaml). The reconciler talks to kube-apiserver through
# fault_proxy.py, which injects what the real server cannot do on cue:
#   1. Throttling: every second write answers 429 with Retry-After; the reconciler backs off and
#      finishes. Conflicting writes: right before the reconciler flips the node's device-plugin
#      label and right before it raises maxReplicas, someone else edits that Node / HPA, so the
#      reconciler's write (carrying the resourceVersion it read) gets a real 409 and must re-read.
#      The proxy holds that label flip until kube-apiserver has been restarted (so the restart
#      always falls while the time-slicing change is in flight, however fast or slow the machine),
#      and the first watches after it are answered "resourceVersion too old" (410): informers
#      re-list. Triton ends with 9 Running pods, the first 7 untouched, each action applied once,
#      the other writers' edits kept, and the Events that say what happened: the retried 409s as
#      WriteConflictRetried on the Node and the HPA, the 429s as ThrottledRetried, one Event per
#      object whose count adds up to every throttled write the reconciler retried.
#   The reconciler runs with --gpu-mapping=dcgm against a Prometheus that is not there: every
#   mapping answer falls back to the node-level rule (counted in /metrics).
#   2. A pod starts on the spare node's GPU between the plan and the MIG change (the proxy runs
#      `kubectl apply` right before the reconciler's mig-parted ConfigMap write reaches the API):
#      the reconciler's re-check sees it and aborts; the label never flips, the pod keeps running,
#      MigReconfigureAborted is recorded.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
# Shell helpers: tests/e2e/lib/common.sh.
set -euo pipefail
# shellcheck disable=SC1091
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
e2e_init reconciler-faults
rec=$build/bin/gpuscale-reconciler
here=$src/tests/e2e/reconciler
e2e_require_cluster
e2e_require "$sim" "$rec"
e2e_show_on_failure "$work/rec.log" "$work/proxy.log" "$work/sim.log"

step "start the control plane, gpuscale-sim, the fault proxy and the reconciler behind it"
e2e_cluster_up --scenario "$here/faults_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1

reconciler_fault_proxy

# The per-GPU mapping is on, but its Prometheus is down: every answer must fall back to the
# node-level rule (never less safe than without it).
port=$(free_port)
status_port=$(free_port)
# The status listener's reviews go straight to kube-apiserver, not through the fault proxy.
e2e_spawn "$work/rec.log" "$rec" run --kubeconfig "$work/proxied.kubeconfig" \
  --policy "$here/policy.yaml" --leader-elect=false --resync-period 2s --mig-timeout 30s \
  --allocatable-timeout 60s --failure-backoff 10m --health-bind-address "127.0.0.1:$port" \
  --secure-status-bind-address "127.0.0.1:$status_port" \
  --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
  --gpu-mapping=dcgm --prometheus-url "http://127.0.0.1:$(free_port)" --prometheus-timeout 2s
eventually 60 "reconciler ready" curl -sf "http://127.0.0.1:$port/readyz" -o /dev/null

uids() { kc get pods -l "app=$1" --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
event_count() { # NAME REASON: occurrences (an Event's count, summed)
  kc get events -A --field-selector "involvedObject.name=$1" -o jsonpath='{range .items[*]}{.reason} {.count}{"\n"}{end}' |
    awk -v r="$2" '$1 == r { n += ($2 == "" ? 1 : $2) } END { print n + 0 }'
}
in_log() { grep -c -- "$2" "$1" || true; }
running_at_least() { [ "$(uids "$1" | grep -c .)" -ge "$2" ]; }
max_replicas_above() { [ "$(kc get hpa "$1" -o jsonpath='{.spec.maxReplicas}')" -gt "$2" ]; }
node_intent_is() { annotation node "$1" gpuscale.io/intent | grep -q "\"kind\":\"$2\""; }
outcome_is() { annotation node "$1" gpuscale.io/outcome | grep -q "\"result\":\"$2\""; }
metric_sum() { # NAME-AND-LABELS-PREFIX: the sum of the reconciler's matching series
  rec_status "$status_port" /metrics | awk -v p="$1" 'index($0, p) == 1 { n += $NF } END { print n + 0 }'
}
throttled_events() { # "KIND/NAME COUNT" per ThrottledRetried Event
  kc get events -A --field-selector reason=ThrottledRetried \
    -o jsonpath='{range .items[*]}{.involvedObject.kind}/{.involvedObject.name} {.count}{"\n"}{end}'
}
throttled_events_match() {
  local events counted
  events=$(throttled_events | awk '{ n += $2 } END { print n + 0 }')
  counted=$(metric_sum 'gpuscale_reconciler_write_retries_total{reason="throttled"')
  [ "$events" -ge 1 ] && [ "$events" -eq "$counted" ]
}

# kube-apiserver stopped and started again with the same command line (the pid file up.sh wrote is
# updated, so down.sh still stops it).
restart_apiserver() {
  local pidfile=$GPUSCALE_CLUSTER_DIR/run/kube-apiserver.pid pid
  pid=$(cat "$pidfile")
  local -a cmd
  mapfile -d '' cmd <"/proc/$pid/cmdline"
  local gone="[ ! -e /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status" # or a zombie
  kill -TERM "$pid"
  # A graceful stop waits for open requests (watches); after 10 s it is a crash instead.
  for _ in $(seq 20); do sh -c "$gone" && break || sleep 0.5; done
  sh -c "$gone" || kill -KILL "$pid"
  eventually 10 "kube-apiserver stopped" sh -c "$gone"
  sleep 2
  setsid "${cmd[@]}" >>"$GPUSCALE_CLUSTER_DIR/logs/kube-apiserver.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  eventually 90 "kube-apiserver ready again" curl -sf --max-time 5 --cacert "$GPUSCALE_CA_CERT" \
    --cert "$GPUSCALE_ADMIN_CERT" --key "$GPUSCALE_ADMIN_KEY" "$GPUSCALE_APISERVER_URL/readyz" -o /dev/null
}

step "1. throttled writes, conflicting writers and a kube-apiserver restart during a time-slicing change"
hpa_path='^PATCH /apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/triton'
node_path='^PATCH /api/v1/nodes/gpu-a100-0'
# The other writer retries until its edit lands (kube-apiserver may be restarting just then).
other_writer() { echo "for i in \$(seq 60); do $bin/kubectl $* --overwrite >/dev/null 2>&1 && exit 0; sleep 1; done; exit 1"; }
# Marks PREFIX.held, then waits (at most 120 s) until the test creates PREFIX.go.
hold_until_go() { echo "touch $1.held; for i in \$(seq 600); do [ -e $1.go ] && exit 0; sleep 0.2; done; exit 1"; }
set_rules "$(
  cat <<JSON
{"throttle": {"methods": ["PATCH", "POST", "PUT"], "every": 2, "retryAfter": 1},
 "hooks": [
  {"match": "$node_path", "body": "device-plugin.config",
   "run": "($(other_writer label node gpu-a100-0 example.com/edited-by=someone-else)); $(hold_until_go "$work/flip")"},
  {"match": "$hpa_path", "body": "maxReplicas",
   "run": "$(other_writer annotate hpa triton example.com/edited-by=someone-else)"}]}
JSON
)"
kc apply -f "$here/triton.yaml" >/dev/null
eventually 60 "7 Triton pods Running" running_at_least triton 7
first7=$(uids triton)
eventually 120 "the time-slicing change is in flight" node_intent_is gpu-a100-0 timeSlicing
eventually 120 "the label flip held at the proxy" test -e "$work/flip.held"
# Rewriting the rules re-arms the proxy's hooks: the node hook has fired, so it goes.
set_rules "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["expireWatches"]=3; r["hooks"]=[h for h in r["hooks"] if h.get("body") != "device-plugin.config"]; print(json.dumps(r))' "$FAULT_RULES")"
restart_apiserver
node_intent_is gpu-a100-0 timeSlicing || die "the time-slicing change was not in flight across the restart"
touch "$work/flip.go"
eventually 120 "maxReplicas raised" max_replicas_above triton 9
[ "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" -ge 14 ] || die "maxReplicas raised before allocatable"
eventually 120 "9 Triton pods Running" running_at_least triton 9
still=$(uids triton | comm -12 - <(echo "$first7") | wc -l)
[ "$still" -eq "$(echo "$first7" | wc -l)" ] || die "running pods disturbed: $still left"
expect_event gpu-a100-0 TimeSlicingSucceeded
expect_event triton MaxReplicasRaised
[ "$(event_count triton MaxReplicasRaised)" -eq 1 ] || die "maxReplicas raised more than once"
[ "$(event_count gpu-a100-0 TimeSlicingStarted)" -eq 1 ] || die "time-slicing started more than once"
[ "$(in_log "$work/rec.log" TimeSlicingStarted)" -eq 1 ] || die "time-slicing label flipped more than once"
[ "$(node_label gpu-a100-0 example.com/edited-by)" = someone-else ] || die "the other writer's node label was lost"
[ "$(annotation hpa triton example.com/edited-by)" = someone-else ] || die "the other writer's HPA annotation was lost"
[ -z "$(annotation node gpu-a100-0 gpuscale.io/intent)" ] || die "node intent left behind"
[ -z "$(annotation hpa triton gpuscale.io/intent)" ] || die "HPA intent left behind"
[ "$(in_log "$work/proxy.log" ' 429 injected')" -ge 1 ] || die "no write was throttled"
[ "$(in_log "$work/proxy.log" "^PATCH /api/v1/nodes/gpu-a100-0.* 409")" -ge 1 ] || die "no node write conflict reached the reconciler"
[ "$(in_log "$work/proxy.log" "^PATCH /apis/autoscaling/v2/.*/triton.* 409")" -ge 1 ] || die "no HPA write conflict reached the reconciler"
[ "$(in_log "$work/proxy.log" 'watch expired (410) injected')" -ge 1 ] || die "no watch was expired"
[ "$(in_log "$work/rec.log" 'expired, relisting')" -ge 1 ] || die "no informer re-listed after a 410"
# Every retried fault ends with its Event: the real 409s on the Node and the HPA, and the 429s as
# one Event per object (not one per 429) whose counts add up to what /metrics counted.
expect_event gpu-a100-0 WriteConflictRetried
expect_event triton WriteConflictRetried
eventually 30 "ThrottledRetried Events count every throttled write" throttled_events_match
[ -z "$(throttled_events | awk '{print $1}' | sort | uniq -d)" ] || die "a ThrottledRetried Event per 429, not one per object"
echo "   ThrottledRetried Events (object count): $(throttled_events | tr '\n' ' ')"
echo "   429s injected: $(in_log "$work/proxy.log" ' 429 injected'), 409s: $(in_log "$work/proxy.log" ' 409$'), 410s: $(in_log "$work/proxy.log" '(410) injected'), upstream-down answers: $(in_log "$work/proxy.log" ' 503 upstream')"

step "2. a pod starts on the spare GPU between plan and action: the reshape is aborted"
set_rules "$(
  cat <<JSON
{"hooks": [
  {"match": "^(PATCH|PUT) /api/v1/namespaces/gpu-operator/configmaps/gpuscale-mig-parted-config",
   "run": "$bin/kubectl apply -f $here/intruder.yaml >/dev/null && $bin/kubectl wait --for=jsonpath='{.status.phase}'=Running pod/intruder --timeout=30s >/dev/null"}]}
JSON
)"
kc apply -f "$here/spare.yaml" >/dev/null
eventually 90 "the reshape is aborted" outcome_is gpu-a100-1 aborted
grep -q "hook ran before PATCH /api/v1/namespaces/gpu-operator/configmaps/gpuscale-mig-parted-config\|hook ran before PUT" "$work/proxy.log" || die "the hook did not run"
expect_event gpu-a100-1 MigReconfigureAborted
[ "$(node_label gpu-a100-1 nvidia.com/mig.config)" = all-3g.20gb ] || die "mig.config changed"
[ "$(in_log "$work/rec.log" 'gpu-a100-1: MigReconfigureStarted')" -eq 0 ] || die "the reshape started anyway"
uid=$(kc get pod intruder -o jsonpath='{.metadata.uid}')
intruder_untouched() {
  [ "$(kc get pod intruder -o jsonpath='{.status.phase}/{.metadata.uid}')" = "Running/$uid" ] &&
    [ "$(node_label gpu-a100-1 nvidia.com/mig.config)" = all-3g.20gb ]
}
# A few more passes (resync 2 s): nothing may retry the reshape while the pod runs.
holds 6 "the intruder was disturbed or mig.config changed later" intruder_untouched
[ -z "$(annotation node gpu-a100-1 gpuscale.io/intent)" ] || die "node intent left behind"
[ "$(kc get hpa spare -o jsonpath='{.spec.maxReplicas}')" = 2 ] || die "spare maxReplicas changed"
# Read the page whole first: `curl | grep -q` fails under pipefail when grep stops reading early.
metrics=$(rec_status "$status_port" /metrics) || die "no /metrics"
grep -q 'gpuscale_reconciler_actions_total{kind="mig",outcome="aborted"}' <<<"$metrics" ||
  die "no aborted action in /metrics"
grep -q 'gpuscale_reconciler_gpu_mapping_total{result="fallback_error"}' <<<"$metrics" ||
  die "the unreachable Prometheus did not count as a GPU mapping fallback"
grep -q 'gpuscale_reconciler_gpu_mapping_total{result="per_gpu"}' <<<"$metrics" &&
  die "a per-GPU answer without Prometheus"
echo "PASS"
