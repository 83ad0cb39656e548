#!/usr/bin/env bash
# `gpuscale-reconciler plan` end to end: the seed dumps give the committed plans byte for byte, the text
# summary is stable, and bad input exits 2 with a message naming the problem.
set -euo pipefail
bin="${GPUSCALE_BINARY_DIR:?}/bin/gpuscale-reconciler"
data="${GPUSCALE_SOURCE_DIR:?}/tests/data/partition"
now=2026-11-22T01:00:00Z
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_plan NAME EXPECTED_FILE ARGS...: the command succeeds and prints exactly EXPECTED_FILE.
expect_plan() {
  local name=$1 expected=$2
  shift 2
  if ! "$bin" plan "$@" --now "$now" >"$work/out" 2>"$work/err"; then
    fail "$name: exit $? ($(cat "$work/err"))"
    return
  fi
  diff -u "$expected" "$work/out" >"$work/diff" || fail "$name: output differs: $(cat "$work/diff")"
}

# expect_error NAME FRAGMENT ARGS...: the command exits 2 and stderr contains FRAGMENT.
expect_error() {
  local name=$1 fragment=$2 rc=0
  shift 2
  "$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, want 2"
  grep -qF -- "$fragment" "$work/err" || fail "$name: stderr lacks '$fragment': $(cat "$work/err")"
}

for scenario in a100_1g_stuck a100_balanced_timeslicing a100_idle_reshape; do
  expect_plan "$scenario" "$data/expected/$scenario.plan.json" --from "$data/$scenario.json"
done
expect_plan t4_timeslicing "$data/expected/t4_timeslicing.plan.json" \
  --from "$data/t4_timeslicing.json" --policy "$data/t4-policy.yaml"
expect_plan "text output" "$data/expected/a100_1g_stuck.plan.txt" \
  --from "$data/a100_1g_stuck.json" --output text
expect_plan "dump on stdin" "$data/expected/a100_1g_stuck.plan.json" --from - <"$data/a100_1g_stuck.json"

# A mixed cluster in one pass: the device-plugin node is time-sliced for the HPA of nvidia.com/
# requests, the idle static DRA node reshaped for the HPA of claims (whose ceiling counts the free
# counters of the partitionable node too), no DRA node is time-sliced or the partitionable one
# reshaped; explain names each node's model.
expect_plan mixed_dra "$data/expected/mixed_dra.plan.json" --from "$data/mixed_dra.json"
"$bin" explain --from "$data/mixed_dra.json" --now "$now" >"$work/out"
for line in "  a100-dp: device plugin" \
  "  a100-dra-idle: DRA static, pool a100-dra-idle generation 1: 2 devices, 0 allocated" \
  "  a100-dra-part: DRA partitionable, pool a100-dra-part generation 1: 10 devices, 1 allocated" \
  "  a100-dra-static: DRA static, pool a100-dra-static generation 1: 7 devices, 7 allocated" \
  "  - node a100-dra-part (migReshape): DraPartitionable:" \
  "  - node a100-dra-static (timeSlicing): DraNoSharing:" \
  "  - node a100-dp (timeSlicing): TimeSliced: 1 -> 4 replicas of nvidia.com/mig-1g.5gb"; do
  grep -qF -- "$line" "$work/out" || fail "mixed_dra: explain lacks '$line': $(cat "$work/out")"
done

# The default policy manages only HPAs annotated for it: the T4 HPA names another policy.
"$bin" plan --from "$data/t4_timeslicing.json" --now "$now" >"$work/out"
[ "$(jq -c '[.demands, .actions, .capacityAfter]' "$work/out")" = '[[],[],[]]' ] ||
  fail "default policy planned for an HPA annotated with another policy: $(cat "$work/out")"

# The reconciler's state ConfigMap in the dump counts as the live reconciler counts it: a change it
# recorded 10 s ago holds the T4 policy's 30 s scale-up cooldown; the same entry for another uid (a
# recreated HPA) does not.
with_state() {  # UID
  jq --arg uid "$1" '.items += [{"apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "gpuscale-reconciler-state", "namespace": "gpuscale"},
    "data": {"default.triton-t4": ({"uid": $uid, "lastChange": "2026-11-22T00:59:50Z",
                                    "originalMaxReplicas": 4} | tojson)}}]' "$data/t4_timeslicing.json"
}
with_state 00000000-0000-4000-8000-000000000061 >"$work/t4-state.json"
"$bin" plan --from "$work/t4-state.json" --policy "$data/t4-policy.yaml" --now "$now" >"$work/out"
[ "$(jq '.actions | length' "$work/out")" = 0 ] || fail "recorded cooldown ignored: $(cat "$work/out")"
with_state another-uid >"$work/t4-other.json"
expect_plan "state of another uid" "$data/expected/t4_timeslicing.plan.json" \
  --from "$work/t4-other.json" --policy "$data/t4-policy.yaml"

# A node whose operation is in flight (its intent annotation) is held as the running reconciler
# holds it: plan and explain run the controller's pass, so neither changes that node.
jq '(.items[] | select(.kind == "Node" and .metadata.name == "a100-node-3") | .metadata.annotations)
    |= ((. // {}) + {"gpuscale.io/intent": "{}"})' "$data/a100_idle_reshape.json" >"$work/in-flight.json"
"$bin" plan --from "$work/in-flight.json" --now "$now" >"$work/out"
[ "$(jq '[.actions[] | select(.node == "a100-node-3")] | length' "$work/out")" = 0 ] ||
  fail "plan changes a node whose operation is in flight: $(cat "$work/out")"
"$bin" explain default/triton --from "$work/in-flight.json" --now "$now" >"$work/out"
grep -qF "node a100-node-3 (migReshape): NodeOperationInFlight" "$work/out" ||
  fail "explain does not hold the node in flight: $(cat "$work/out")"

# An object that does not read stops nothing: it is named on stderr and planned as if absent, and
# an HPA another tenant wrote the way kube-apiserver accepts it (a metric target whose type names
# one field while it sets another) is read as the HPA controller reads it.
jq '.items += [{"kind": "Pod", "metadata": {"name": "p", "namespace": "other"},
                "spec": {"containers": "x"}},
               {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "tenant", "namespace": "other"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
                         "maxReplicas": 2147483647,
                         "metrics": [{"type": "External", "external": {"metric": {"name": "q"},
                                      "target": {"type": "Value", "averageValue": "1"}}},
                                     {"type": "Resource", "resource": {"name": "cpu",
                                      "target": {"type": "AverageValue", "averageUtilization": 50}}}]},
                "status": {"currentMetrics": null, "desiredReplicas": 0}}]' \
  "$data/a100_1g_stuck.json" >"$work/tenant.json"
expect_plan "a tenant's odd objects" "$data/expected/a100_1g_stuck.plan.json" --from "$work/tenant.json"
grep -qF "planned as if absent: Pod other/p: containers must be a list" "$work/err" ||
  fail "the unreadable pod is not named: $(cat "$work/err")"
"$bin" explain --from "$work/tenant.json" --now "$now" >"$work/out"
grep -qF "Pod other/p: containers must be a list (malformed)" "$work/out" ||
  fail "explain does not name the unreadable pod: $(cat "$work/out")"

# Valid JSON that is not a Kubernetes dump, broken JSON, a broken policy, bad flags.
echo '{"items":[1]}' >"$work/bad.json"
expect_error "malformed dump" "item must be an object" plan --from "$work/bad.json"
echo '{"items": [' >"$work/broken.json"
expect_error "broken JSON" "not valid JSON" plan --from "$work/broken.json"
printf 'policies:\n- name: x\n  levers: [magic]\n' >"$work/bad.yaml"
expect_error "malformed policy" "line 3, column 12" plan --from "$data/a100_1g_stuck.json" --policy "$work/bad.yaml"
expect_error "missing dump" "cannot read" plan --from "$work/none.json"
expect_error "missing --from" "--from DUMP.json is required" plan
expect_error "bad output" "invalid argument \"yaml\" for \"--output\" flag: must be one of json, text" plan --from "$data/a100_1g_stuck.json" --output yaml
expect_error "unknown subcommand" "unknown command \"apply\"" apply
expect_error "run: unknown flag" "unknown flag: --bogus" run --bogus
expect_error "run: bad duration" "invalid argument \"soon\" for \"--mig-timeout\" flag" run --mig-timeout soon
expect_error "run: bad GPU mapping" "invalid argument \"gpu\" for \"--gpu-mapping\" flag: must be one of node, dcgm" run --gpu-mapping gpu
expect_error "run: dcgm mapping needs Prometheus" "--gpu-mapping=dcgm needs --prometheus-url" run --gpu-mapping=dcgm
expect_error "run: bad dcgm max age" "invalid argument \"0s\" for \"--dcgm-max-age\" flag: must be positive" run --dcgm-max-age 0s
expect_error "run: bad Prometheus flag" "--prometheus-timeout" run --gpu-mapping=dcgm --prometheus-url http://127.0.0.1:1 --prometheus-timeout soon
printf 'policies:\n- name: x\n  levers: [magic]\n' >"$work/bad-run.yaml"
expect_error "run: bad policy file" "line 3, column 12" run --policy "$work/bad-run.yaml"
# The old flag name still works, with a warning naming the new one.
expect_error "run: --config is deprecated" "flag --config is deprecated, use --policy" run --config "$work/bad-run.yaml"
printf 'policies:\n- name: everyone\n  levers: [timeSlicing]\n' >"$work/unscoped.yaml"
expect_error "run: a policy without scope" "has no HPA scope" run --policy "$work/unscoped.yaml"
expect_error "plan: a policy without scope" "has no HPA scope" plan --from "$data/a100_1g_stuck.json" --policy "$work/unscoped.yaml"
expect_error "run: bad state cap" "invalid argument \"10\" for \"--state-max-bytes\" flag: must be an integer from 1024 to 1024000" run --state-max-bytes 10
expect_error "no subcommand" "usage: gpuscale-reconciler <command> [arguments]"

# policy check: the policies a file defines, its old spellings as warnings, its errors (exit 1).
printf 'policies:\n- name: a\n  hpaNamespaces: [x]\n  migModeChange: {enable: true}\n- name: b\n  hpas: [x/y]\n' >"$work/old.yaml"
if "$bin" policy check "$work/old.yaml" >"$work/out" 2>"$work/err"; then
  grep -qF "old.yaml: 2 policies: a b" "$work/out" || fail "policy check: output: $(cat "$work/out")"
  grep -qF "line 4, column 19: migModeChange.enable is deprecated, use migModeChange.enabled" "$work/err" ||
    fail "policy check: no deprecation warning: $(cat "$work/err")"
else
  fail "policy check: exit $? ($(cat "$work/err"))"
fi
rc=0
"$bin" policy check "$work/bad.yaml" >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "policy check of a bad file: exit $rc, want 1"
grep -qF "line 3, column 12" "$work/err" || fail "policy check of a bad file: $(cat "$work/err")"
expect_error "policy: no word" "expected \`reference\` or \`check FILE\`" policy
"$bin" policy reference >"$work/policy.md" || fail "policy reference: exit $?"
grep -qF '| `migModeChange.enabled` | boolean | `false` |' "$work/policy.md" ||
  fail "policy reference lacks migModeChange.enabled"

[ "$failures" -eq 0 ] || exit 1
echo "plan CLI: all checks passed"
