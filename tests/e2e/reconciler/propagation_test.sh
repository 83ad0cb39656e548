#!/usr/bin/env bash
# A MIG config reaches mig-manager through a mounted ConfigMap file, which the kubelet refreshes
# up to about a minute after the ConfigMap changes. gpuscale-sim plays that lag
# (gpuOperator.configMapSyncSeconds: 15 over giveback_scenario.yaml): a label naming a config the
# file does not have yet fails the reshape. The reconciler, told the lag
# (--mig-config-propagation 20s), writes the new config, waits, then flips the label: the idle
# gpu-a100-1 is reshaped on the first attempt, mig-manager never reports the config missing, and
# maxReplicas is raised.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-propagation

step "start the control plane, gpuscale-sim (ConfigMap files 15 s behind) and the reconciler"
sed 's/^gpuOperator:$/gpuOperator:\n  configMapSyncSeconds: 15/' "$here/giveback_scenario.yaml" \
  >"$work/scenario.yaml"
grep -q "configMapSyncSeconds: 15" "$work/scenario.yaml" || die "scenario not made"
e2e_cluster_up --scenario "$work/scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
reconciler_start_one "$here/giveback_policy.yaml" --mig-config-propagation 20s

step "Triton at 7 on gpu-a100-0's seven 1g.5gb slices, then 9 wanted"
sed -e 's/replicas: 9/replicas: 7/' -e 's/minReplicas: 9/minReplicas: 7/' \
  "$here/triton.yaml" | kc apply -f - >/dev/null
running_is() {
  [ "$(kc get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l)" -eq "$1" ]
}
eventually 60 "7 Triton pods Running" running_is 7
kc patch hpa triton --type merge -p '{"spec":{"minReplicas":9}}' >/dev/null

step "the idle gpu-a100-1 is reshaped once its config is in mig-manager's file, then maxReplicas raised"
max_above_9() { [ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt 9 ]; }
eventually 120 "maxReplicas raised" max_above_9
case "$(node_label gpu-a100-1 nvidia.com/mig.config)" in
  gpuscale-gpu-a100-1-*) ;;
  *) die "gpu-a100-1 not reshaped: $(node_label gpu-a100-1 nvidia.com/mig.config)" ;;
esac
[ "$(node_label gpu-a100-1 nvidia.com/mig.config.state)" = success ] || die "mig-manager not at success"
! grep -q "is not in any mig-parted ConfigMap" "$work/sim.log" ||
  die "mig-manager was sent to a config its file did not have yet"
! event_reasons gpu-a100-1 | grep -qx MigReconfigureFailed || die "the MIG reshape failed"
kc get hpa triton
step "reshaped on the first attempt"
