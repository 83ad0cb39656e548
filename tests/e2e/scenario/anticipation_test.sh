#!/usr/bin/env bash
# Anticipation end to end, short: bench/scenario/run.sh runs a100-ramp-anticipation.yaml with
# `--reconciler on` (the policy default: anticipation on) on the real control plane, the real HPA
# controller, gpuscale-sim, Prometheus and the adapter, and this test asserts that
#   1. the reconciler predicted the ceiling: a CeilingAnticipated Event on the HPA says what;
#   2. it raised maxReplicas ahead of a ceiling at least once: some raise M -> N in the HPA watch
#      came while the HPA had not been held at M (no ScalingLimited TooManyReplicas at maxReplicas
#      M since maxReplicas became M). The first raise past the 7 slices may be reactive: the HPA
#      jumps there from a plateau that gives no trend to forecast from;
#   3. no pod was disturbed (the report counts 0, no container restarted).
# Exit 77 (skipped) when the cluster binaries, the programs or prometheus are missing.
set -euo pipefail

src=${GPUSCALE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-anticipation-test.XXXXXX")
# shellcheck source=run_scenario.sh
. "$src/tests/e2e/scenario/run_scenario.sh"
run_scenario "$work" "$src/tests/e2e/scenario/a100-ramp-anticipation.yaml" --reconciler on \
  --speed 1 --duration 100 --tail 0

check_scenario "$work" <<'PY'
import sys
from scenario_checks import Run, check, check_undisturbed, finish

run = Run(sys.argv[1])
anticipated = [e for e in run.events if e["reason"] == "CeilingAnticipated"]
check(bool(anticipated), "a CeilingAnticipated Event on the HPA")
for e in anticipated[:1]:
    print("     " + e["message"])
# The HPA watch: time maxReplicas desiredReplicas ScalingLimited-status reason
raises = []  # (from, to, held at `from` before this raise)
current, held = "7", False
for f in run.hpa_watch():
    if len(f) < 2:
        continue
    if f[1] != current:
        raises.append((current, f[1], held))
        current, held = f[1], False
    if f[1:] == [current, current, "True", "TooManyReplicas"]:
        held = True
check(bool(raises) and int(raises[-1][1]) > 7, "maxReplicas was raised above the 7 slices")
for frm, to, was_held in raises:
    print("     maxReplicas %s -> %s, %s" % (frm, to, "after a hold" if was_held else "ahead"))
check(any(not was_held for _, _, was_held in raises),
      "at least one raise came before the HPA was held at the ceiling it lifted")
check_undisturbed(run)
finish()
PY
