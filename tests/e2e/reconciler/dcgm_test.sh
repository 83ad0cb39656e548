#!/usr/bin/env bash
# gpuscale-reconciler's per-GPU path (--gpu-mapping=dcgm) on the real control plane, with
# gpuscale-sim as the GPU Operator and its dcgm-exporter series in a real Prometheus.
# One node, two A100s (dcgm_scenario.yaml): GPU 0 all-balanced, GPU 1 at 3g.20gb x2. Triton wants
# 4 pods of 1g.5gb; GPU 0 has two slices: 2 Running, 2 Pending.
#   1. No dcgm data (Prometheus not running at the URL the reconciler asks): the node counts as
#      busy, nothing is reshaped, maxReplicas stays, the fallback is counted.
#   2. Prometheus starts at that URL and scrapes gpuscale-sim: its series put both pods on GPU 0.
#      The reconciler reshapes GPU 1 only (the node's entry in its mig-parted ConfigMap keeps GPU
#      0's geometry), waits for success and allocatable, raises maxReplicas; the pending pods run
#      on GPU 1 and the two running pods keep their UIDs. Every action has its Event.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim, gpuscale-reconciler or prometheus are
# missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-dcgm /usr/bin/prometheus
e2e_show_on_failure "$work/prom/prometheus.log"
node=gpu-a100-0

step "start the control plane, gpuscale-sim and the reconciler (Prometheus not up yet)"
e2e_cluster_up --scenario "$here/dcgm_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
prom_port=$(free_port)
reconciler_start_one "$here/dcgm_policy.yaml" --gpu-mapping=dcgm \
  --prometheus-url "http://127.0.0.1:$prom_port" --prometheus-timeout 5s
rec_status_port=$REC_STATUS_PORT

count_pods() { # phase
  kc get pods -l app=triton --field-selector="status.phase=$1" -o name | wc -l
}
pods_are() { [ "$(count_pods "$1")" -eq "$2" ]; }
max_replicas() { kc get hpa triton -o jsonpath='{.spec.maxReplicas}'; }
mapping_count() { # result: gpuscale_reconciler_gpu_mapping_total{result=...} (0 when absent)
  rec_status "$rec_status_port" /metrics |
    awk -v r="result=\"$1\"" 'index($0, "gpuscale_reconciler_gpu_mapping_total{") == 1 &&
      index($0, r) { n += $2 } END { print n + 0 }'
}
mapping_seen() { [ "$(mapping_count "$1")" -gt 0 ]; }
unchanged() {
  [ "$(node_label "$node" nvidia.com/mig.config)" = balanced-and-3g ] && [ "$(max_replicas)" = 4 ]
}

step "Triton: 4 wanted, GPU 0 has two 1g.5gb slices"
kc apply -f "$here/dcgm_triton.yaml" >/dev/null
eventually 60 "2 Triton pods Running" pods_are Running 2
eventually 30 "2 Triton pods Pending" pods_are Pending 2
first=$(kc get pods -l app=triton --field-selector=status.phase=Running \
  -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)

step "gpuscale-sim's dcgm-exporter series put both pods on GPU 0, none on GPU 1"
# Read straight from gpuscale-sim: nothing can be reshaped before Prometheus is up.
pods_on_sim() { # gpu: FB_USED series of the node's GPU that name a pod
  curl -sf "$SIM_URL/metrics" | grep '^DCGM_FI_DEV_FB_USED{' | grep "Hostname=\"$node\"" |
    grep "gpu=\"$1\"" | grep -c 'pod="' || true
}
sim_sees_pods_on_gpu0() { [ "$(pods_on_sim 0)" -eq 2 ]; }
eventually 30 "dcgm series of GPU 0 name both pods" sim_sees_pods_on_gpu0
[ "$(pods_on_sim 1)" -eq 0 ] || die "a pod on GPU 1 before the reshape"

step "without dcgm data the node is busy: no reshape"
eventually 60 "the mapping falls back (Prometheus unreachable)" mapping_seen fallback_error
holds 8 "reshaped or maxReplicas raised without dcgm data" unchanged
[ "$(mapping_count per_gpu)" -eq 0 ] || die "a per-GPU answer without Prometheus"

step "Prometheus scrapes gpuscale-sim"
e2e_on_exit "'$src/tests/support/prometheus_run.sh' stop '$work/prom' >/dev/null 2>&1"
prom=$("$src/tests/support/prometheus_run.sh" start "$work/prom" --scrape "${SIM_URL#http://}" \
  --interval 1s --port "$prom_port")
instant() { # PromQL: the first sample's value, empty when none
  curl -sf "$prom/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}

step "the reconciler reshapes GPU 1 only, waits, then raises maxReplicas"
raised() { [ "$(max_replicas)" -gt 4 ]; }
eventually 90 "maxReplicas raised" raised
cfg=$(node_label "$node" nvidia.com/mig.config)
case "$cfg" in gpuscale-"$node"-*) ;; *) die "nvidia.com/mig.config is '$cfg'" ;; esac
[ "$(node_label "$node" nvidia.com/mig.config.state)" = success ] || die "state not success"
[ "$(node_allocatable "$node" nvidia.com/mig-1g.5gb)" -gt 2 ] || die "maxReplicas raised before allocatable"
mapping_seen per_gpu || die "no per-GPU answer counted"
kc get configmap -n gpu-operator gpuscale-mig-parted-config -o jsonpath='{.data.config\.yaml}' |
  python3 -c '
import sys, yaml
name = sys.argv[1]
entries = yaml.safe_load(sys.stdin)["mig-configs"][name]
per_gpu = {}
for e in entries:
    assert isinstance(e["devices"], list), "per-GPU entries, not devices: all: %r" % e
    for d in e["devices"]:
        per_gpu[d] = e["mig-devices"]
gpu0 = {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
assert per_gpu.get(0) == gpu0, "GPU 0 entry changed: %r" % per_gpu.get(0)
assert per_gpu.get(1, {}).get("1g.5gb", 0) > 0, "GPU 1 has no 1g.5gb: %r" % per_gpu.get(1)
print("config %s: GPU 0 %s, GPU 1 %s" % (name, per_gpu[0], per_gpu[1]))' "$cfg" ||
  die "the mig-parted entry for $cfg is not GPU 0 kept, GPU 1 reshaped"
expect_event "$node" MigReconfigureStarted
expect_event "$node" MigReconfigureSucceeded
expect_event triton MaxReplicasRaised
eventually 60 "4 Triton pods Running" pods_are Running 4
still=$(kc get pods -l app=triton -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' |
  sort | comm -12 - <(echo "$first") | wc -l)
[ "$still" -eq 2 ] || die "running pods disturbed: $still of 2 left"
pods_on_gpu1() { [ "$(instant "count(DCGM_FI_DEV_FB_USED{Hostname=\"$node\",gpu=\"1\",pod!=\"\"})")" = 2 ]; }
eventually 30 "dcgm series put the new pods on GPU 1" pods_on_gpu1
started=$(grep -c "MigReconfigureStarted" "$work/rec.log" || true)
[ "$started" -eq 1 ] || die "reshape started $started times"
echo "PASS"
