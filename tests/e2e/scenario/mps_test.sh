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

if python3 - "$work/out" <<'PY'; then
import json, sys

out = sys.argv[1]
samples = [json.loads(l) for l in open(out + "/samples.jsonl") if l.strip()]
events = json.load(open(out + "/events.json"))["items"]
final = json.load(open(out + "/pods-final.json"))["items"]
result = json.load(open(out + "/result.json"))
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

# 1. Held at 4, raised, more than 4 pods Running.
check(samples[0]["ceiling"] == 4, "the static ceiling is the 4 T4s (%s)" % samples[0]["ceiling"])
raised = next((i for i, s in enumerate(samples) if s["ceiling"] > 4), None)
check(raised is not None, "the reconciler raised maxReplicas (max seen %d)"
      % max(s["ceiling"] for s in samples))
past = next((i for i, s in enumerate(samples) if raised is not None and i >= raised
             and s["running"] > 4), None)
check(past is not None, "more than 4 pods Run after the raise (max %d)" % result["max_replicas"])

# 2. The node shares with MPS.
node = "gpu-t4-0"
label = samples[-1]["node_configs"][node]["nvidia.com/device-plugin.config"]
check(label.startswith("gpuscale-"), "the node selects a gpuscale config (%r)" % label)
text = next((cm.get("data", {}).get(label, "")
             for cm in json.load(open(out + "/configmaps-final.json"))["items"]
             if cm["metadata"]["name"] == "device-plugin-config"), "")
check("mps:" in text and "timeSlicing" not in text, "that config shares with MPS:\n" + text)
labels = next(n["metadata"]["labels"] for n in json.load(open(out + "/nodes-final.json"))["items"]
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
grown = next((i for i, s in enumerate(samples) if raised is not None and i > raised
              and s["running"] > samples[raised]["running"]), None)
check(grown is not None, "the Deployment grew after the raise")
if grown is not None:
    before = set(zip(samples[raised]["pods"], samples[raised]["uids"]))
    after = set(zip(samples[grown]["pods"], samples[grown]["uids"]))
    check(before <= after, "the %d pods Running when the reconciler acted still run, same UIDs"
          % len(before))
check(all(s["restarts"] == 0 for s in samples), "no container restarted")
check(all(c.get("restartCount", 0) == 0 for p in final
          for c in p["status"].get("containerStatuses", [])), "no restarts at the end either")
check(result["pods_disturbed"] == 0, "the report counts 0 pods disturbed")

# 4. Events.
changes = sum(1 for a, b in zip(samples, samples[1:]) if a["node_configs"][node] != b["node_configs"][node])
seen = sum(e.get("count") or 1 for e in events if e["reason"].startswith("TimeSlicing")
           and e["involvedObject"]["name"] == node)
check(changes >= 1 and seen >= changes,
      "%d device-plugin config change(s), %d Event(s) on the node" % (changes, seen))
print(json.dumps(result))
sys.exit(1 if failures else 0)
PY
  rm -rf "$work"
  echo "PASS"
else
  echo "FAIL; logs kept in $work" >&2
  exit 1
fi
