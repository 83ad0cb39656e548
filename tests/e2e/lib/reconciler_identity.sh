# Sourced by the e2e tests and bench/scenario/run.sh: gpuscale-reconciler with the identity it has
# in a cluster, so a test sees what the shipped permissions allow and refuse.
#
#   reconciler_identity FILE [MODE]
#                             after `source CLUSTER/env` (kubectl: "$KUBECTL"): the namespaces
#                             gpuscale and gpu-operator, then the ServiceAccount, the RBAC and the
#                             admission policies of manifests/reconciler, and FILE, a kubeconfig with
#                             a 6 h token of the ServiceAccount gpuscale/gpuscale-reconciler. MODE act
#                             (the default) adds act mode's write grants
#                             (manifests/reconciler/components/act/rbac.yaml); observe removes them
#                             (the base's read-only RBAC). Returns once kube-apiserver enforces the
#                             policies and the grants of MODE. The reconciler then runs with
#                             --kubeconfig FILE and its Lease and state in gpuscale
#                             (--leader-elect-namespace gpuscale, --state-namespace gpuscale).
# Returns non-zero on failure (callers run under `set -e`).

# shellcheck source=adapter_stack.sh
source "$(dirname "${BASH_SOURCE[0]}")/adapter_stack.sh"

reconciler_identity() { # kubeconfig-file [act|observe]
  local src f i mode=${2:-act} act_rbac can
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  act_rbac=$src/manifests/reconciler/components/act/rbac.yaml
  : "${KUBECTL:?}" "${GPUSCALE_APISERVER_URL:?}"
  "$KUBECTL" create namespace gpu-operator --dry-run=client -o yaml | "$KUBECTL" apply -f - >/dev/null
  for f in namespace service-account rbac admission-policy; do
    "$KUBECTL" apply -f "$src/manifests/reconciler/$f.yaml" >/dev/null
  done
  case $mode in
    act) "$KUBECTL" apply -f "$act_rbac" >/dev/null ;;
    observe) "$KUBECTL" delete -f "$act_rbac" --ignore-not-found >/dev/null ;;
    *) echo "reconciler_identity: mode $mode is neither act nor observe" >&2; return 1 ;;
  esac
  adapter_stack_sa_kubeconfig gpuscale gpuscale-reconciler "$1"
  # Policies take effect once kube-apiserver's informers have them: wait until a Lease the
  # reconciler does not own (RBAC lets it create any in gpuscale, in both modes) is refused by the
  # scope policy, and until RBAC says what MODE grants (patch nodes: act only).
  local answer
  for i in $(seq 60); do
    answer=$(printf '%s' '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"gpuscale-policy-probe","namespace":"gpuscale"}}' |
      "$KUBECTL" --kubeconfig "$1" create -f - --dry-run=server -o name 2>&1) || true
    can=$("$KUBECTL" --kubeconfig "$1" auth can-i patch nodes 2>/dev/null) || true
    case $answer in
      *"ValidatingAdmissionPolicy 'gpuscale-reconciler-scope'"*)
        { [ "$mode" = act ] && [ "$can" = yes ]; } || { [ "$mode" = observe ] && [ "$can" = no ]; } &&
          return 0 ;;
    esac
    sleep 0.5
  done
  echo "reconciler_identity: the admission policies or the $mode grants are not in force after 30 s: $answer (patch nodes: $can)" >&2
  return 1
}
