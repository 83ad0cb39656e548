# Sourced by bench/scenario/run.sh: what the scenario's workload section (validated by
# gpuscale-sim's scenario parser) changes in the objects a service gets and in what the harness
# reads. `workload.scaler: keda` (bench/scenario/lib/keda.sh): a KEDA ScaledObject instead of the
# HPA, whose HPA is keda-hpa-NAME. `workload.kind: LeaderWorkerSet` with `workload.size: N`: the
# custom resource of LeaderWorkerSet's shape (tests/e2e/scale_target/crd.yaml) instead of the
# Deployment, N pods per replica, kept by `gpuscale-sim run --pod-groups`; the static ceiling and
# the HPA count groups (allocatable / N). `workload.scaler: planner` (bench/scenario/lib/planner.sh):
# no HPA, an external planner process scales the Deployment (and asks for partitions through a
# GPUCapacityRequest when the reconciler runs).
#
#   workload_init SCENARIO       sets workload_scaler, workload_group_size, workload_resource (the
#                                kind to `kubectl get`), hpa_prefix ("" or keda-hpa-) and
#                                workload_sim_args (gpuscale-sim run's extra arguments)
#   workload_before_sim          applies the LeaderWorkerSet CRD (before gpuscale-sim watches it)
#   workload_start WORK          starts KEDA, or installs the GPUCapacityRequest CRD for a planner
#                                with the reconciler on (after the adapter)
#   workload_objects NS PROM     filter: run.sh's Deployment + HPA YAML -> the objects to apply
#   workload_created NS NAME TARGET POLICY
#                                waits for what the harness then watches (KEDA's HPA), or starts
#                                the planner of service NAME
#   workload_stop                stops KEDA and the planners
# shellcheck source=keda.sh
source "$(dirname "${BASH_SOURCE[0]}")/keda.sh"
# shellcheck source=planner.sh
source "$(dirname "${BASH_SOURCE[0]}")/planner.sh"

workload_init() { # scenario
  read -r workload_scaler workload_kind workload_group_size < <(python3 -c '
import sys, yaml
w = (yaml.safe_load(open(sys.argv[1])) or {}).get("workload") or {}
print(w.get("scaler", "hpa"), w.get("kind", "Deployment"), int(w.get("size", 1)))' "$1")
  workload_resource=deployment hpa_prefix= workload_sim_args=()
  if [ "$workload_scaler" = planner ] && [ "$workload_kind" != Deployment ]; then
    echo "workload.scaler planner: the planner scales a Deployment" >&2
    exit 2
  fi
  [ "$workload_scaler" = keda ] && hpa_prefix=keda-hpa-
  if [ "$workload_kind" = LeaderWorkerSet ]; then
    workload_resource=leaderworkerset
    workload_sim_args=(--pod-groups leaderworkerset.x-k8s.io/v1/leaderworkersets)
  fi
}

workload_before_sim() {
  [ "$workload_resource" = leaderworkerset ] || return 0
  "$KUBECTL" apply -f "$src/tests/e2e/scale_target/crd.yaml" >/dev/null &&
    "$KUBECTL" wait --for=condition=Established --timeout=60s \
      crd/leaderworkersets.leaderworkerset.x-k8s.io >/dev/null
}

workload_start() { # work
  case $workload_scaler in
    keda) keda_scenario_start "$1" ;;
    planner) planner_scenario_start ;;
  esac
}

workload_objects() { # namespace prometheus-url
  python3 "$src/bench/scenario/lib/workload.py" "$scenario" "$2" "$1"
}

workload_created() { # namespace name target policy
  case $workload_scaler in
    keda) keda_scenario_hpa "$1" "$2" ;;
    planner) planner_scenario_run "$1" "$2" "$3" "$4" ;;
  esac
}

workload_stop() {
  planner_scenario_stop
  keda_scenario_stop
}
