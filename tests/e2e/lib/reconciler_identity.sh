# Sourced by the e2e tests and bench/scenario/run.sh: gpuscale-reconciler with the identity it has
# in a cluster, so a test sees what the shipped permissions allow and refuse.
#
#   reconciler_identity FILE  after `source CLUSTER/env` (kubectl: "$KUBECTL"): the namespaces
#                             gpuscale and gpu-operator, then the ServiceAccount, the RBAC and the
#                             admission policies of manifests/reconciler, and FILE, a kubeconfig with
#                             a 6 h token of the ServiceAccount gpuscale/gpuscale-reconciler. Returns
#                             once kube-apiserver enforces the policies. The reconciler then runs with
#                             --kubeconfig FILE and its Lease and state in gpuscale
#                             (--leader-elect-namespace gpuscale, --state-namespace gpuscale).
# Returns non-zero on failure (callers run under `set -e`).

# shellcheck source=adapter_stack.sh
source "$(dirname "${BASH_SOURCE[0]}")/adapter_stack.sh"

reconciler_identity() { # kubeconfig-file
  local src f i
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  : "${KUBECTL:?}" "${GPUSCALE_APISERVER_URL:?}"
  "$KUBECTL" create namespace gpu-operator --dry-run=client -o yaml | "$KUBECTL" apply -f - >/dev/null
  for f in namespace service-account rbac admission-policy; do
    "$KUBECTL" apply -f "$src/manifests/reconciler/$f.yaml" >/dev/null
  done
  adapter_stack_sa_kubeconfig gpuscale gpuscale-reconciler "$1"
  # Policies take effect once kube-apiserver's informers have them: wait until a ConfigMap the
  # reconciler does not own (RBAC lets it create any in gpuscale) is refused by the scope policy.
  local answer
  for i in $(seq 60); do
    answer=$("$KUBECTL" --kubeconfig "$1" -n gpuscale create configmap gpuscale-policy-probe \
      --dry-run=server -o name 2>&1) || true
    case $answer in *"ValidatingAdmissionPolicy 'gpuscale-reconciler-scope'"*) return 0 ;; esac
    sleep 0.5
  done
  echo "reconciler_identity: the admission policies are not enforced after 30 s: $answer" >&2
  return 1
}
