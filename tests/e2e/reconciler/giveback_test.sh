#!/usr/bin/env bash
# Give-back end to end (giveback_scenario.yaml, giveback_policy.yaml: migGiveBack restore, a 5 s
# scale-down cooldown). Triton's HPA has no metrics here, so its replicas follow minReplicas and
# `kubectl scale`: a spike is minReplicas 9 (2 pods Pending), a fall is minReplicas 7 and the
# Deployment scaled to 7, the burst's pods going first (pod-deletion-cost).
#   1. MIG: the spike reshapes the idle gpu-a100-1 and raises maxReplicas; after the fall the
#      reconciler restores gpu-a100-1's geometry from before the burst and lowers maxReplicas to 9.
#   2. Time-slicing: with gpu-a100-1 cordoned the next spike time-slices gpu-a100-0; after the fall
#      the replicas go back to 1 and maxReplicas to 9.
# The seven pods that ran before the first spike keep their UIDs throughout.
# Exit 77 (skipped) when the cluster binaries, gpuscale-sim or gpuscale-reconciler are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
reconciler_test_init reconciler-giveback
policy=$here/giveback_policy.yaml

step "start the control plane, gpuscale-sim and the reconciler"
e2e_cluster_up --scenario "$here/giveback_scenario.yaml"
e2e_start_sim "$GPUSCALE_SCENARIO" --resync 1
reconciler_start_one "$policy"

running() { kc get pods -l app=triton --field-selector=status.phase=Running -o name | wc -l; }
running_is() { [ "$(running)" -eq "$1" ]; }
max_is() { [ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" = "$1" ]; }
max_above() { [ "$(kc get hpa triton -o jsonpath='{.spec.maxReplicas}')" -gt "$1" ]; }
uids() { kc get pods -l app=triton -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
# Every pod of the first seven still there.
undisturbed() {
  [ "$(uids | comm -12 - <(echo "$first7") | wc -l)" -eq 7 ] || die "running pods disturbed"
}
# The fall: the pods not among the first seven are deleted first, then 7 replicas.
fall() {
  local pod
  for pod in $(kc get pods -l app=triton -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' |
    grep -v -F -f <(echo "$first7") | cut -d' ' -f1); do
    kc annotate pod "$pod" controller.kubernetes.io/pod-deletion-cost=-100 --overwrite >/dev/null
  done
  kc patch hpa triton --type merge -p '{"spec":{"minReplicas":7}}' >/dev/null
  kc scale deployment triton --replicas 7 >/dev/null
  eventually 60 "7 Triton pods" sh -c "[ \$($bin/kubectl get pods -l app=triton -o name | wc -l) -eq 7 ]"
}
spike() {
  kc patch hpa triton --type merge -p '{"spec":{"minReplicas":9}}' >/dev/null
}

step "Triton at 7 on gpu-a100-0's seven 1g.5gb slices"
sed -e 's/replicas: 9/replicas: 7/' -e 's/minReplicas: 9/minReplicas: 7/' \
  "$here/triton.yaml" | kc apply -f - >/dev/null
eventually 60 "7 Triton pods Running" running_is 7
first7=$(uids)
[ "$(echo "$first7" | wc -l)" -eq 7 ] || die "not 7 pods"

step "MIG spike: 9 wanted; the idle gpu-a100-1 is reshaped, then maxReplicas raised"
spike
eventually 90 "maxReplicas raised" max_above 9
case "$(node_label gpu-a100-1 nvidia.com/mig.config)" in gpuscale-gpu-a100-1-*) ;; *) die "gpu-a100-1 not reshaped" ;; esac
annotation node gpu-a100-1 gpuscale.io/mig-restore | grep -q '"before":"all-3g.20gb"' ||
  die "no give-back record: $(annotation node gpu-a100-1 gpuscale.io/mig-restore)"
[ -n "$(node_allocatable gpu-a100-1 nvidia.com/mig-1g.5gb)" ] || die "no 1g.5gb on gpu-a100-1"
eventually 60 "9 Triton pods Running" running_is 9
undisturbed
expect_event gpu-a100-1 MigReconfigureSucceeded

step "MIG fall: the burst's pods go; gpu-a100-1 gets its geometry back, maxReplicas 9"
fall
restored() {
  [ "$(node_allocatable gpu-a100-1 nvidia.com/mig-3g.20gb)" = 2 ] &&
    [ -z "$(node_allocatable gpu-a100-1 nvidia.com/mig-1g.5gb)" ] &&
    [ "$(node_label gpu-a100-1 nvidia.com/mig.config.state)" = success ]
}
eventually 90 "gpu-a100-1 restored to 2 x 3g.20gb" restored
eventually 60 "maxReplicas back to 9" max_is 9
running_is 7 || die "pods lost in the give-back"
undisturbed
"$rec" explain default/triton --kubeconfig "$KUBECONFIG" --policy "$policy" >"$work/explain.txt" ||
  die "explain failed: $(cat "$work/explain.txt")"
grep -q "not raised: NotBlocked" "$work/explain.txt" || die "explain says: $(cat "$work/explain.txt")"

step "time-slicing spike: gpu-a100-1 cordoned, gpu-a100-0 is time-sliced, then maxReplicas raised"
kc cordon gpu-a100-1 >/dev/null
spike
eventually 90 "maxReplicas raised" max_above 9
cfg=$(node_label gpu-a100-0 nvidia.com/device-plugin.config)
case "$cfg" in gpuscale-gpu-a100-0-*) ;; *) die "device-plugin.config is '$cfg'" ;; esac
[ "$(node_allocatable gpu-a100-0 nvidia.com/mig-1g.5gb)" -ge 14 ] || die "not time-sliced"
eventually 60 "9 Triton pods Running" running_is 9
undisturbed

step "time-slicing fall: replicas back to 1, maxReplicas 9"
fall
eventually 90 "gpu-a100-0 back to 7 slices" sh -c "[ \"\$($bin/kubectl get node gpu-a100-0 -o jsonpath='{.status.allocatable.nvidia\.com/mig-1g\.5gb}')\" = 7 ]"
eventually 60 "maxReplicas back to 9" max_is 9
running_is 7 || die "pods lost in the give-back"
undisturbed
echo "PASS"
