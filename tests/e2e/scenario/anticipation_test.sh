#!/usr/bin/env bash
# Anticipation end to end, short: bench/scenario/run.sh runs a100-ramp-anticipation.yaml with
# `--reconciler on` (the policy default: anticipation on) on the real control plane, the real HPA
# controller, gpuscale-sim, Prometheus and the adapter, and this test asserts that
#   1. the reconciler predicted the ceiling: a CeilingAnticipated Event on the HPA says what;
#   2. it raised maxReplicas before the HPA was ever held at 7 (no ScalingLimited TooManyReplicas
#      at maxReplicas 7 before the raise, in the HPA watch);
#   3. no pod was disturbed (the report counts 0, no container restarted).
# Exit 77 (skipped) when the cluster binaries, the programs or prometheus are missing.
set -euo pipefail

src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-anticipation-test.XXXXXX")
# shellcheck source=run_scenario.sh
. "$src/tests/e2e/scenario/run_scenario.sh"
run_scenario "$work" "$src/tests/e2e/scenario/a100-ramp-anticipation.yaml" --reconciler on \
  --speed 1 --duration 75 --tail 0

if python3 - "$work/out" <<'PY'; then
import json, sys

out = sys.argv[1]
events = json.load(open(out + "/events.json"))["items"]
result = json.load(open(out + "/result.json"))
samples = [json.loads(l) for l in open(out + "/samples.jsonl") if l.strip()]
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

anticipated = [e for e in events if e["reason"] == "CeilingAnticipated"]
check(bool(anticipated), "a CeilingAnticipated Event on the HPA")
for e in anticipated[:1]:
    print("     " + e["message"])
# The HPA watch: time maxReplicas desiredReplicas ScalingLimited-status reason
raised_at = held_at = None
for line in open(out + "/hpa.log"):
    f = line.split()
    if len(f) >= 2 and f[1] != "7" and raised_at is None:
        raised_at = float(f[0])
    if f[1:] == ["7", "7", "True", "TooManyReplicas"] and held_at is None:
        held_at = float(f[0])
check(raised_at is not None, "maxReplicas was raised above the 7 slices")
check(raised_at is not None and (held_at is None or raised_at < held_at),
      "raised before the HPA was held at 7 (raised at %s, held at %s)" % (raised_at, held_at))
check(result["pods_disturbed"] == 0, "the report counts 0 pods disturbed")
check(all(s["restarts"] == 0 for s in samples), "no container restarted")
sys.exit(1 if failures else 0)
PY
  rm -rf "$work"
  echo "PASS"
else
  echo "FAIL; logs kept in $work" >&2
  exit 1
fi
