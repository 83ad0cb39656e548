# Sourced by bench/scenario/run.sh (through workload.sh) for a scenario with `workload.scaler:
# planner`: no HPA; the external planner bench/scenario/lib/planner.py scales each service's
# Deployment from the same signal and target the HPA would read. With the reconciler on it asks for
# partitions through a GPUCapacityRequest named after the service (the CRD of manifests/crds,
# installed before the reconciler starts; the request carries the service's policy annotation) and
# scales to what is granted; with it off (a cluster without gpuscale) it scales as far as the
# partitions it sees on the nodes. Deployments of a device-plugin resource only (not
# LeaderWorkerSet groups, not ResourceClaims).
#
#   planner_scenario_start             the CRD, with the reconciler on (after the cluster's env)
#   planner_scenario_run NS NAME TARGET POLICY
#                                      starts the planner of service NAME (after its Deployment);
#                                      returns once it wrote its first state
#                                      ($work/NAME-planner.json; its log $work/NAME-planner.log)
#   planner_scenario_stop              stops the planners (nothing when none started)
# Reads run.sh's globals: reconciler, src, work, prom, resource, ceiling, hpa_metric, server,
# target_waiting.
planner_pids=()

planner_scenario_start() {
  [ "$reconciler" != off ] || return 0
  "$KUBECTL" apply -f "$src/manifests/crds/gpucapacityrequests.yaml" >/dev/null &&
    "$KUBECTL" wait --for=condition=Established --timeout=60s \
      crd/gpucapacityrequests.gpuscale.io >/dev/null
}

planner_scenario_run() { # namespace name target policy
  local mode=budget target=$3 annotation=() deadline
  if [ "$reconciler" != off ]; then
    mode=request annotation=(--annotation "gpuscale.io/partition-policy=$4")
  fi
  [ "$server" != vllm ] || target=$target_waiting
  rm -f "$work/$2-planner.json"
  python3 "$src/bench/scenario/lib/planner.py" --namespace "$1" --name "$2" --prometheus "$prom" \
    --metric "$hpa_metric" --target "$target" --mode "$mode" --resource "$resource" \
    --static "$ceiling" --max-replicas $((4 * ceiling)) --state "$work/$2-planner.json" \
    "${annotation[@]}" >"$work/$2-planner.log" 2>&1 &
  planner_pids+=($!)
  deadline=$((SECONDS + 60))
  until [ -s "$work/$2-planner.json" ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 1
  done
}

planner_scenario_stop() {
  local p
  for p in "${planner_pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  planner_pids=()
}
