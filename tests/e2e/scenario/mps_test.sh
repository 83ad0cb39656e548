#!/usr/bin/env bash
# The MPS lever end to end: bench/scenario/run.sh runs bench/scenario/t4-mps.yaml (four T4s, no
# sharing, policy bench/scenario/policies/t4-mps.yaml: levers [mps]) with the reconciler reactive
# and the load clock 3x faster, on the real control plane with the real HPA controller,
# gpuscale-sim as the GPU Operator and the load, a real Prometheus and gpuscale-adapter; the test
# asserts on what the harness recorded:
#   1. the HPA is held at its static ceiling of 4 (four T4s), the reconciler raises maxReplicas,
#      and then more than 4 pods Run;
#   2. the node's nvidia.com/device-plugin.config now names a gpuscale config whose content shares
#      nvidia.com/gpu with MPS (not time-slicing), and GFD labels the node sharing-strategy mps;
#   3. no pod was disturbed (same UIDs, no restarts, the report counts 0);
#   4. each change of the device-plugin config has an Event on the node.
# Exit 77 (skipped) when the cluster binaries, the programs or prometheus are missing.
set -euo pipefail

src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
here=$src/tests/e2e/scenario
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-mps-test.XXXXXX")

# shellcheck source=run_scenario.sh
. "$here/run_scenario.sh"
run_scenario "$work" t4-mps --reconciler reactive --speed 3 --tail 30

check_scenario "$work" <<'PY'
import json, sys
from scenario_checks import Run, check, check_raised_past, check_undisturbed, finish

run = Run(sys.argv[1])
samples = run.samples

# 1. Held at 4, raised, more than 4 pods Running.
raised, past = check_raised_past(run, 4)

# 2. The node shares with MPS.
node = "gpu-t4-0"
label = samples[-1]["node_configs"][node]["nvidia.com/device-plugin.config"]
check(label.startswith("gpuscale-"), "the node selects a gpuscale config (%r)" % label)
text = next((cm.get("data", {}).get(label, "")
             for cm in run.load("configmaps-final.json")["items"]
             if cm["metadata"]["name"] == "device-plugin-config"), "")
check("mps:" in text and "timeSlicing" not in text, "that config shares with MPS:\n" + text)
labels = next(n["metadata"]["labels"] for n in run.load("nodes-final.json")["items"]
              if n["metadata"]["name"] == node)
check(labels.get("nvidia.com/gpu.sharing-strategy") == "mps"
      and labels.get("nvidia.com/mps.capable") == "true"
      and labels.get("nvidia.com/gpu.product") == "Tesla-T4-SHARED",
      "GFD labels: sharing-strategy %s, mps.capable %s, product %s" % (
          labels.get("nvidia.com/gpu.sharing-strategy"), labels.get("nvidia.com/mps.capable"),
          labels.get("nvidia.com/gpu.product")))

# 3. No pod disturbed.
# The pods Running when the reconciler acted are still there once more pods run (later the HPA
# may scale in: that is its choice, counted apart in pods_disturbed).
grown = None
if raised is not None:
    grown = run.first(lambda s: s["running"] > samples[raised]["running"], raised + 1)
check(grown is not None, "the Deployment grew after the raise")
check_undisturbed(run, raised, grown)

# 4. Events.
changes = run.changes(lambda s: s["node_configs"][node])
seen = run.event_count("Mps", node)
check(changes >= 1 and seen >= changes,
      "%d device-plugin config change(s), %d Event(s) on the node" % (changes, seen))
print(json.dumps(run.result))
finish()
PY
