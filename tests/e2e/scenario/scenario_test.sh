#!/usr/bin/env bash
# Scenario (a) end to end, short: bench/scenario/run.sh runs a100-7x1g-short.yaml
# with the reconciler reactive (it acts once the HPA is held at its ceiling; anticipation has its
# own test, anticipation_test.sh) — the real control plane with the real HPA controller,
# gpuscale-sim as the GPU Operator and the inference load, a real Prometheus, gpuscale-adapter behind the aggregator,
# gpuscale-reconciler, which runs as it does in a cluster (its ServiceAccount token, RBAC and
# admission policies, run.sh --least-privilege: a write they refuse fails the story) — and this
# test asserts on what the harness recorded (samples every 2 s from kubectl, Prometheus, the
# aggregated API and the simulator; Events and pods at the end):
#   1. the HPA is held at 7 replicas (7 slices), the reconciler raises its ceiling, and then more
#      than 7 pods Run;
#   2. the queue time the HPA reads (from Prometheus through the adapter and the aggregator, HPA
#      status) and `kubectl get --raw .../pods/%2A/avg_time_queue_us` were above the HPA's target
#      (250 ms; the SLO is 1 s) and fall back under it with the new replicas;
#   3. no pod was disturbed: the pods Running when the reconciler acted still run with the same UIDs
#      when the queue is back under target, no container restarted, and the report counts 0;
#   4. every reconciler action has an Event: each raise of maxReplicas (MaxReplicasRaised on the
#      HPA) and each change of a node's device-plugin or MIG config (TimeSlicing*/Mps*/Mig* on the node);
#   5. another tenant's HPA, written the way kube-apiserver accepts it but with metric targets whose
#      type names one field while they set another (added once the reconciler runs, in namespace
#      tenant), stops no pass: the checks above hold, and the reconciler never failed a pass.
# Exit 77 (skipped) when the cluster binaries, the programs or prometheus are missing.
set -euo pipefail

src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
here=$src/tests/e2e/scenario
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-scenario-test.XXXXXX")
slo_us=1000000 target_us=250000

# shellcheck source=run_scenario.sh
. "$here/run_scenario.sh"
cat >"$work/tenant.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: tenant}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: odd-targets, namespace: tenant}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: not-there}
  minReplicas: 1
  maxReplicas: 2147483647
  metrics:
  - type: External
    external:
      metric: {name: queue_depth}
      target: {type: Value, averageValue: "1"}
  - type: Resource
    resource:
      name: cpu
      target: {type: AverageValue, averageUtilization: 50}
YAML
export GPUSCALE_SCENARIO_EXTRA=$work/tenant.yaml
run_scenario "$work" "$here/a100-7x1g-short.yaml" --reconciler reactive --speed 1 \
  --duration 170 --tail 0 --slo-us "$slo_us" --target-us "$target_us" --least-privilege

check_scenario "$work" "$target_us" <<'PY'
import os
import sys
from scenario_checks import Run, check, check_raised_past, check_undisturbed, finish

run, target = Run(sys.argv[1]), float(sys.argv[2])
samples = run.samples

# 1. Held at 7, ceiling raised by the reconciler, then more than 7 pods Running.
# The samples, or the HPA status watch (the reconciler may lift the ceiling between two samples).
# Held means the HPA reached the ceiling: it says so (ScalingLimited TooManyReplicas), or its desired
# replicas reached maxReplicas 7 and the reconciler, seeing the metric still above target there,
# raised the ceiling before the HPA's next sync could report the limit.
held_in_watch = any(f[1:] == ["7", "7", "True", "TooManyReplicas"] or f[1:3] == ["7", "7"]
                    for f in run.hpa_watch())
check(held_in_watch or any(s["limited"] and s["replicas"] == 7 for s in samples),
      "the HPA was held at its ceiling of 7 replicas (desired 7 of max 7, or ScalingLimited)")
raised, past = check_raised_past(run, 7)

# 2. Queue time through the adapter: above target, then back under it with the new replicas.
above = run.first(lambda s: (s.get("hpa_queue_us") or 0) > target)
check(above is not None, "the HPA read a queue time above its %d us target" % target)
back = run.first(lambda s: s.get("hpa_queue_us") is not None and s["hpa_queue_us"] < target
                 and (s.get("adapter_queue_us") or 0) < target, past)
check(back is not None, "queue time fell back under target (HPA status and kubectl get --raw)")
if back is not None:
    print("     at t=%.0fs: HPA %.0f us, adapter %.0f us, %d pods" % (
        samples[back]["t"], samples[back]["hpa_queue_us"], samples[back]["adapter_queue_us"] or 0,
        samples[back]["running"]))

# 3. No pod disturbed.
check_undisturbed(run, raised, back)

# 4. Every action has an Event.
raises = sum(1 for a, b in zip(samples, samples[1:]) if b["ceiling"] > a["ceiling"])
check(raises >= 1 and run.event_count("MaxReplicasRaised", "triton") >= raises,
      "%d maxReplicas raise(s) seen, %d MaxReplicasRaised Event(s)"
      % (raises, run.event_count("MaxReplicasRaised", "triton")))
for node in samples[0]["node_configs"]:
    for key, prefix in (("nvidia.com/device-plugin.config", ("TimeSlicing", "Mps")),
                        ("nvidia.com/mig.config", ("Mig",))):
        changes = run.changes(lambda s: s["node_configs"][node][key])
        if changes:
            check(run.event_count(prefix, node) >= changes, "%s: %d %s change(s), %d %s* Event(s)"
                  % (node, changes, key, run.event_count(prefix, node), "*/".join(prefix)))
check(raises + sum(1 for e in run.events
                   if e["reason"].startswith(("TimeSlicing", "Mps", "Mig"))) > 0,
      "the reconciler acted")

# 5. The other tenant's HPA stopped no pass.
with open(os.path.join(run.out, "run", "reconciler.log")) as f:
    failed = [line for line in f if "snapshot" in line and "malformed" in line]
check(not failed, "no pass failed on the tenant's HPA%s" % (": " + failed[0].strip() if failed else ""))
finish()
PY
