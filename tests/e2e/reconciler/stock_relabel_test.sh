#!/usr/bin/env bash
# mig-manager reads only the custom ConfigMap the ClusterPolicy names; after a reshape through the
# reconciler, an operator's relabel to a stock name must still resolve (stock_scenario.yaml).
#   1. Before the reconciler wrote anything, a relabel to `all-balanced` fails: the custom
#      ConfigMap does not have it (mig-manager does not look in the default one).
#   2. A workload asks for 1g.5gb slices the node does not have: the reconciler reshapes it through
#      its ConfigMap (success, the pods run there).
#   3. The workload goes away and the reconciler stops. The node is relabelled by hand to
#      `all-1g.5gb` and then `all-balanced`: mig-manager applies each (state success, the stock
#      geometry's allocatable), because the reconciler carried the stock configs over.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-stock
node=gpu-a100-0

step "start the control plane and gpuscale-sim"
e2e_cluster_up --scenario "$here/stock_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
state_is() { [ "$(node_label "$node" nvidia.com/mig.config.state)" = "$1" ]; }
eventually 60 "node ready at two-3g" state_is success

step "before any reshape, a stock name is not in the custom ConfigMap: failed"
kc label node "$node" nvidia.com/mig.config=all-balanced --overwrite >/dev/null
eventually 30 "all-balanced fails" state_is failed
grep -q 'config "all-balanced" is not in' "$work/sim.log" || die "no lookup failure logged"
kc label node "$node" nvidia.com/mig.config=two-3g --overwrite >/dev/null
eventually 30 "back at two-3g" state_is success

step "the reconciler reshapes the node for a workload that wants 1g.5gb"
reconciler_start_one "$here/dcgm_policy.yaml"
kc apply -f "$here/spare.yaml" >/dev/null
spare_running() {
  [ "$(kc get pods -l app=spare --field-selector=status.phase=Running -o name | wc -l)" -eq 2 ]
}
eventually 90 "both spare pods Running on the reshaped node" spare_running
cfg=$(node_label "$node" nvidia.com/mig.config)
case "$cfg" in gpuscale-"$node"-*) ;; *) die "nvidia.com/mig.config is '$cfg'" ;; esac
state_is success || die "state not success after the reshape"
expect_event "$node" MigReconfigureSucceeded
configs() {
  kc get configmap -n gpu-operator gpuscale-mig-parted-config -o jsonpath='{.data.config\.yaml}' |
    python3 -c 'import sys, yaml; print(" ".join(sorted(yaml.safe_load(sys.stdin)["mig-configs"])))'
}
for name in two-3g all-balanced all-1g.5gb all-disabled "$cfg"; do
  case " $(configs) " in *" $name "*) ;; *) die "$name not in the custom ConfigMap: $(configs)" ;; esac
done

step "the workload goes, the reconciler stops; the operator relabels to stock names"
kc delete -f "$here/spare.yaml" --wait=false >/dev/null
no_pods() { [ -z "$(kc get pods -l app=spare -o name)" ]; }
eventually 60 "spare pods gone" no_pods
e2e_stop "$REC_PID" || true
untainted() { ! kc get node "$node" -o jsonpath='{.spec.taints[*].key}' | grep -q gpuscale.io/reshape; }
untainted || die "reshape taint left behind"
alloc_1g() { kc get node "$node" -o jsonpath='{.status.allocatable.nvidia\.com/mig-1g\.5gb}'; }
relabel() { # config expected-1g.5gb-allocatable
  local from
  from=$(wc -l <"$work/sim.log")
  kc label node "$node" "nvidia.com/mig.config=$1" --overwrite >/dev/null
  applied() { [ "$(alloc_1g)" = "$2" ] && state_is success; }
  eventually 30 "$1 applied: success, allocatable nvidia.com/mig-1g.5gb $2" applied "$@"
  tail -n "+$((from + 1))" "$work/sim.log" >"$work/sim-$1.log"
  grep -q "\"$1\"" "$work/sim-$1.log" || die "mig-manager never saw $1"
  ! grep -q "is not in" "$work/sim-$1.log" || die "$1 did not resolve"
}
relabel all-1g.5gb 7
relabel all-balanced 2
grep -q 'reconfiguration [0-9]* to "all-balanced": pending' "$work/sim.log" ||
  die "mig-manager did not run all-balanced"
echo "PASS"
