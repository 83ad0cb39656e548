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

check_scenario "$work" <<'PY'
import sys
from scenario_checks import Run, check, check_undisturbed, finish

run = Run(sys.argv[1])
anticipated = [e for e in run.events if e["reason"] == "CeilingAnticipated"]
check(bool(anticipated), "a CeilingAnticipated Event on the HPA")
for e in anticipated[:1]:
    print("     " + e["message"])
# The HPA watch: time maxReplicas desiredReplicas ScalingLimited-status reason
raised_at = held_at = None
for f in run.hpa_watch():
    if len(f) >= 2 and f[1] != "7" and raised_at is None:
        raised_at = float(f[0])
    if f[1:] == ["7", "7", "True", "TooManyReplicas"] and held_at is None:
        held_at = float(f[0])
check(raised_at is not None, "maxReplicas was raised above the 7 slices")
check(raised_at is not None and (held_at is None or raised_at < held_at),
      "raised before the HPA was held at 7 (raised at %s, held at %s)" % (raised_at, held_at))
check_undisturbed(run)
finish()
PY
