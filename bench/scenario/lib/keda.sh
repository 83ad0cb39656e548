# Sourced by bench/scenario/run.sh for a scenario with `workload.scaler: keda`: KEDA's operator
# and metrics server (tests/cluster/build.sh extra: tests/cluster/bin-extra/keda, or
# $GPUSCALE_CLUSTER_EXTRA_BIN/keda) run as the reconciler's KEDA e2e test runs them
# (tests/e2e/lib/keda_stack.sh): CRDs and RBAC from KEDA's module, certificates of their own,
# KEDA alone behind the external metrics API (gpuscale-adapter serves the custom metrics only).
# The service's ScaledObject (bench/scenario/lib/workload.py) makes KEDA's HPA keda-hpa-NAME, which
# the samples and watches read.
#
#   keda_scenario_start WORK   after the cluster's env and adapter_stack.sh; returns once KEDA
#                              serves external metrics
#   keda_scenario_hpa NS NAME  waits until KEDA made the HPA of the ScaledObject NAME
#   keda_scenario_stop         stops both processes (nothing when they never started)

keda_scenario_start() { # work
  local dir=${GPUSCALE_CLUSTER_EXTRA_BIN:-$src/tests/cluster/bin-extra}/keda
  [ -x "$dir/keda" ] && [ -x "$dir/keda-adapter" ] ||
    { echo "skip: KEDA not built (tests/cluster/build.sh extra)" >&2; exit 77; }
  # shellcheck source=../../../tests/e2e/lib/keda_stack.sh
  source "$src/tests/e2e/lib/keda_stack.sh"
  keda_stack_init "$1" "$dir" && keda_stack_install && keda_stack_certificate &&
    keda_stack_start && keda_stack_register
}

keda_scenario_hpa() { # namespace name
  local deadline=$((SECONDS + 90))
  until "$KUBECTL" -n "$1" get hpa "keda-hpa-$2" -o name >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 1
  done
}

keda_scenario_stop() {
  if declare -F keda_stack_stop >/dev/null; then keda_stack_stop; fi
}
