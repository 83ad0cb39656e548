# Sourced by the scenario e2e tests.
scenario_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# run_scenario WORK ARGS... runs bench/scenario/run.sh ARGS --out WORK/out, logging to
# WORK/run.log. It exits 77 (skipped, WORK removed) when parts are missing and 1 (WORK kept, log
# tails shown) when the run fails; it returns when there is a result.
run_scenario() {
  local work=$1 rc=0
  shift
  "$src/bench/scenario/run.sh" "$@" --out "$work/out" >"$work/run.log" 2>&1 || rc=$?
  if [ $rc -eq 77 ]; then
    tail -n 1 "$work/run.log"
    rm -rf "$work"
    exit 77
  fi
  if [ $rc -ne 0 ]; then
    echo "FAIL: the scenario run failed (rc=$rc); logs kept in $work" >&2
    tail -n 30 "$work/run.log" "$work"/out/run/{sim,reconciler,adapter}.log >&2 2>/dev/null || true
    exit 1
  fi
}

# check_scenario WORK ARGS... <<'PY' runs the test's own Python checks from stdin with
# scenario_checks.py importable and argv WORK/out ARGS..., then gives the verdict: PASS (WORK
# removed) when they exit 0, else FAIL and exit 1 (WORK kept for the logs).
check_scenario() {
  local work=$1
  shift
  if PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$scenario_dir${PYTHONPATH:+:$PYTHONPATH}" \
    python3 - "$work/out" "$@"; then
    rm -rf "$work"
    echo "PASS"
  else
    echo "FAIL; logs kept in $work" >&2
    exit 1
  fi
}
