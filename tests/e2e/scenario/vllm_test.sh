#!/usr/bin/env bash
# vLLM end to end, short: bench/scenario/run.sh runs vllm-a100-7x1g-short.yaml (workload.server vllm)
# with the reconciler reactive — the real control plane with the real HPA controller, gpuscale-sim
# as the GPU Operator and as vLLM pods (vLLM's series), a real Prometheus, gpuscale-adapter behind
# the aggregator serving rules/vllm.yaml, gpuscale-reconciler — and this test asserts on what the
# harness recorded:
#   1. the HPA scales the vLLM Deployment on vllm_num_requests_waiting: the value it reads (HPA
#      status) and `kubectl get --raw .../pods/%2A/vllm_num_requests_waiting` were above its target
#      of 1 request waiting per pod while it was held at 7 replicas (7 slices);
#   2. the reconciler raises maxReplicas and then more than 7 pods Run;
#   3. the node's device-plugin config time-slices nvidia.com/mig-1g.5gb;
#   4. no pod was disturbed and every raise has its Event.
# Exit 77 (skipped) when the cluster binaries, the programs or prometheus are missing.
set -euo pipefail

src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
here=$src/tests/e2e/scenario
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-vllm-test.XXXXXX")

# shellcheck source=run_scenario.sh
. "$here/run_scenario.sh"
run_scenario "$work" "$here/vllm-a100-7x1g-short.yaml" --reconciler reactive --speed 1 \
  --duration 150 --tail 0 --target-waiting 1

check_scenario "$work" <<'PY'
import sys
from scenario_checks import Run, check, check_raised_past, check_undisturbed, finish

run = Run(sys.argv[1])
samples = run.samples

# 1. The HPA reads vLLM's waiting requests through the adapter.
check(all(s.get("hpa_queue_us") is None for s in samples), "no Triton metric in the samples")
above = run.first(lambda s: (s.get("hpa_waiting") or 0) > 1 and (s.get("adapter_waiting") or 0) > 1)
check(above is not None, "the HPA and kubectl get --raw read more than 1 request waiting per pod")
held_in_watch = any(f[1:] == ["7", "7", "True", "TooManyReplicas"] or f[1:3] == ["7", "7"]
                    for f in run.hpa_watch())
check(held_in_watch or any(s["limited"] and s["replicas"] == 7 for s in samples),
      "the HPA was held at its ceiling of 7 replicas")

# 2. Raised, more pods.
raised, past = check_raised_past(run, 7)

# 3. The 1g.5gb slices are time-sliced.
node = "gpu-a100-0"
label = samples[-1]["node_configs"][node]["nvidia.com/device-plugin.config"]
text = next((cm.get("data", {}).get(label, "")
             for cm in run.load("configmaps-final.json")["items"]
             if cm["metadata"]["name"] == "device-plugin-config"), "")
check("timeSlicing" in text and "nvidia.com/mig-1g.5gb" in text,
      "the node's config %r time-slices the 1g.5gb slices:\n%s" % (label, text))

# 4. No pod disturbed; Events.
check_undisturbed(run, raised, past)
raises = sum(1 for a, b in zip(samples, samples[1:]) if b["ceiling"] > a["ceiling"])
check(raises >= 1 and run.event_count("MaxReplicasRaised", "vllm") >= raises,
      "%d maxReplicas raise(s) seen, %d MaxReplicasRaised Event(s)"
      % (raises, run.event_count("MaxReplicasRaised", "vllm")))
finish()
PY
