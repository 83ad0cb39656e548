# shellcheck shell=bash
# Sourced by bench/scenario/run.sh: a scenario whose workload requests its GPU through DRA
# (`workload.claim: {deviceClass, selector}`) instead of a device-plugin resource. Its pods then carry
# `resources.claims` and a `resourceClaims` entry naming a ResourceClaimTemplate `<service>-gpu`
# (one request of one device of that class, with the selector), which the real kube-scheduler
# allocates against the ResourceSlices gpuscale-sim publishes for the scenario's `dra:` nodes, and
# the HPA's static ceiling is the number of published devices that claim can get.
#
#   dra_init SCENARIO [SVC]  reads workload.claim (of the `services:` entry SVC when it has its own);
#                            sets dra_class ("" without a claim) and dra_selector
#   dra_enabled              true when the workload uses a claim
#   dra_allocatable          devices of the class that the selector admits, over every node's pool as
#                            the scheduler reads it (highest generation, all slices there); a device
#                            that consumes shared counters (partitionable) is not counted
#   dra_template NS SVC      applies the ResourceClaimTemplate SVC-gpu in NS
#   dra_resource_note        what a pod requests, for the logs and the result's note
# The selector is evaluated in the subset the scenarios use: `device.attributes['gpu.nvidia.com'].X`
# compared with string literals, `&&`, `||`, `!` (a selector outside it fails the run).

dra_class= dra_selector=

dra_init() { # scenario [service]
  local out
  out=$(python3 - "$1" "${2:-}" <<'PY'
import sys, yaml
s = yaml.safe_load(open(sys.argv[1])) or {}
claim = (s.get("workload") or {}).get("claim") or {}
for sv in s.get("services") or []:
    if sv.get("name") == sys.argv[2] and (sv.get("workload") or {}).get("claim"):
        claim = sv["workload"]["claim"]
print(claim.get("deviceClass", ""))
print(claim.get("selector", ""))
PY
) || return 1
  dra_class=$(sed -n 1p <<<"$out")
  dra_selector=$(sed -n 2p <<<"$out")
}

dra_enabled() { [ -n "$dra_class" ]; }

dra_resource_note() { echo "ResourceClaimTemplate ($dra_class${dra_selector:+, $dra_selector})"; }

dra_allocatable() {
  local type=gpu
  [ "$dra_class" = mig.nvidia.com ] && type=mig
  "$KUBECTL" get resourceslices -o json | python3 -c '
import json, re, sys
want_type, selector = sys.argv[1], sys.argv[2]
expr = re.sub(r"device\.attributes\[.gpu\.nvidia\.com.\]\.(\w+)", lambda m: "attr(%r)" % m.group(1),
              selector)
expr = expr.replace("&&", " and ").replace("||", " or ")
expr = re.sub(r"!(?!=)", " not ", expr)
pools = {}
for s in json.load(sys.stdin)["items"]:
    spec = s["spec"]
    if spec.get("driver") != "gpu.nvidia.com":
        continue
    pool = spec["pool"]
    pools.setdefault(pool["name"], []).append((pool["generation"], pool["resourceSliceCount"], spec))
count = 0
for slices in pools.values():
    top = max(g for g, _, _ in slices)
    current = [(n, spec) for g, n, spec in slices if g == top]
    if len(current) != current[0][0]:
        continue  # an incomplete pool offers nothing
    for _, spec in current:
        for d in spec.get("devices") or []:
            if d.get("consumesCounters"):
                continue
            attrs = d.get("attributes") or {}
            def attr(k):
                v = attrs.get(k) or {}
                return next(iter(v.values()), None)
            if attr("type") == want_type and (not expr or eval(expr, {"attr": attr})):
                count += 1
print(count)' "$type" "$dra_selector"
}

# shellcheck source=../../../tests/e2e/lib/dra_claims.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../tests/e2e/lib/dra_claims.sh"
dra_template() { dra_claim_template "$1" "$2-gpu" "$dra_class" "$dra_selector"; } # namespace service
