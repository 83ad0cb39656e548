# shellcheck shell=bash
# ResourceClaimTemplates for the tests and the scenario harness (bench/scenario/lib/dra.sh).
#
#   dra_claim_template NS NAME DEVICECLASS [CEL]   applies ResourceClaimTemplate NAME in NS: one
#                                                  request `gpu` of one device of DEVICECLASS, with
#                                                  the CEL selector when given ($KUBECTL)

dra_claim_template() {
  local selectors=""
  [ -z "${4:-}" ] || selectors="
          selectors: [{cel: {expression: \"$4\"}}]"
  "$KUBECTL" -n "$1" apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $2}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: $3$selectors
YAML
}
