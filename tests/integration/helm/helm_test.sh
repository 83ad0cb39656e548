#!/usr/bin/env bash
# The Helm chart (charts/gpuscale) offline: `helm lint --strict`, the render with kustomize-equivalent
# values compared in substance with `kubectl kustomize manifests/{adapter,reconciler}` (and
# reconciler.mode=act with the reconciler base plus components/act; one behaviour, two install
# paths), the reconciler's RBAC per mode (read-only in observe), each TLS mode's objects, the
# values that must be refused (the schema refuses unknown keys), names after the release (fullname,
# nameOverride) with every reference between objects intact, the prometheus-community chart
# conventions (serviceAccount, rbac.create, scheduling, pod labels, securityContext, extra
# containers, NOTES.txt), image tags from appVersion, and the chart's copies of the default rules and policy. Exit 77 (skipped)
# without helm (tests/cluster/build.sh builds it) or kubectl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
helm=${GPUSCALE_HELM:-$src/tests/cluster/bin/helm}
chart=$src/charts/gpuscale
[ -x "$helm" ] || { echo "helm not built ($helm): skipped"; exit 77; }
command -v kubectl >/dev/null 2>&1 || { echo "kubectl not found: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME=$work/cache HELM_CONFIG_HOME=$work/config HELM_DATA_HOME=$work/data

failures=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}
# grep that reads all its input: `cmd | grep -q` can stop early and, under pipefail, fail cmd
# with SIGPIPE.
contains() { grep "$@" >/dev/null; }
render_as() { local release=$1; shift; "$helm" template "$release" "$chart" --namespace gpuscale "$@"; }
render() { render_as gpuscale "$@"; }

check "helm lint --strict" '"$helm" lint --strict "$chart" >"$work/lint" 2>&1 || { cat "$work/lint"; false; }'
for mode in selfSigned insecure certManager; do
  check "helm lint with tls.mode=$mode" \
    '"$helm" lint --strict "$chart" --set adapter.tls.mode=$mode >/dev/null 2>&1'
done

# The kustomize base's certificate comes from an overlay (caBundle) or the cert-manager component:
# the chart's certManager mode must render what the base with that component renders. Kustomize
# takes only relative paths to bases and components, so overlays name them relative to $work.
mkdir -p "$work/cert-manager" "$work/resource-metrics"
base=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "$src/manifests/adapter" "$work/resource-metrics")
printf 'resources: [%s]\ncomponents: [%s/components/cert-manager]\n' "$base" "$base" \
  >"$work/cert-manager/kustomization.yaml"
# The chart ships the GPUCapacityRequest CRD in crds/ (rendered with --include-crds), the base
# through manifests/crds.
render -f "$here/kustomize-equivalent.yaml" --include-crds >"$work/chart.yaml"
kubectl kustomize "$work/cert-manager" >"$work/adapter.yaml"
kubectl kustomize "$src/manifests/reconciler" >"$work/reconciler.yaml"
check "the chart renders what the kustomize bases render" \
  'python3 "$here/compare_renders.py" "$work/chart.yaml" "$work/adapter.yaml" "$work/reconciler.yaml"'
# metrics.k8s.io: the chart's toggle and the kustomize component add the same objects.
printf 'resources: [%s]\ncomponents: [%s/components/resource-metrics, %s/components/cert-manager]\n' \
  "$base" "$base" "$base" >"$work/resource-metrics/kustomization.yaml"
render -f "$here/kustomize-equivalent.yaml" --include-crds --set adapter.apiServices.resource=true \
  >"$work/chart-resource-metrics.yaml"
kubectl kustomize "$work/resource-metrics" >"$work/adapter-resource-metrics.yaml"
check "adapter.apiServices.resource renders what the resource-metrics component renders" \
  'python3 "$here/compare_renders.py" "$work/chart-resource-metrics.yaml" \
     "$work/adapter-resource-metrics.yaml" "$work/reconciler.yaml"'
# reconciler.mode=act: the chart's act render is what the reconciler base with components/act renders
# (but the chart's uninstall hook, which kustomize has no counterpart for).
mkdir -p "$work/act"
rbase=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "$src/manifests/reconciler" "$work/act")
printf 'resources: [%s]\ncomponents: [%s/components/act]\n' "$rbase" "$rbase" >"$work/act/kustomization.yaml"
render -f "$here/kustomize-equivalent.yaml" --include-crds --set reconciler.mode=act \
  --set reconciler.uninstallCleanup.enabled=false >"$work/chart-act.yaml"
kubectl kustomize "$work/act" >"$work/reconciler-act.yaml"
check "reconciler.mode=act renders what the reconciler base with components/act renders" \
  'python3 "$here/compare_renders.py" "$work/chart-act.yaml" "$work/adapter.yaml" "$work/reconciler-act.yaml"'
check "reconciler.mode=observe: read-only RBAC (Events and its Lease aside)" \
  'python3 "$src/tests/integration/reconciler_manifests/check_rbac.py" "$work/chart.yaml" observe'
check "reconciler.mode=act: the write grants act needs" \
  'python3 "$src/tests/integration/reconciler_manifests/check_rbac.py" "$work/chart-act.yaml" act'
check "no metrics.k8s.io APIService by default" \
  '! grep -q "name: v1beta1.metrics.k8s.io" "$work/chart.yaml" "$work/adapter.yaml"'

# Defaults: a CA (kept, ten years) and a one-year serving certificate it signs, the CA in every
# APIService. (Renewal on upgrade needs a cluster to read the Secrets back: tests/e2e/chart_tls.)
render >"$work/default.yaml"
check "default TLS: a one-year serving certificate signed by the chart's CA, verified through caBundle" \
  'python3 "$here/check_tls.py" selfSigned "$work/default.yaml"'
render --set adapter.tls.mode=certManager >"$work/cert-manager.yaml"
check "tls.mode=certManager: Certificates, Issuers and CA injection" \
  'python3 "$here/check_tls.py" certManager "$work/cert-manager.yaml"'
render --set adapter.tls.mode=secret --set adapter.tls.secretName=mine \
  --set adapter.tls.caBundle=Q0E= >"$work/secret.yaml"
check "tls.mode=secret: the user's Secret and caBundle" \
  'python3 "$here/check_tls.py" secret "$work/secret.yaml"'
check "tls.mode=secret without a caBundle is refused" \
  '! render --set adapter.tls.mode=secret --set adapter.tls.secretName=mine >/dev/null 2>&1'
check "an unknown tls.mode is refused" '! render --set adapter.tls.mode=plain >/dev/null 2>&1'
# The PodMonitor verifies the reconciler's status listener, whose certificate comes from the same
# source as the adapter's.
for mode in selfSigned certManager insecure; do
  check "reconciler.podMonitor with tls.mode=$mode: the listener's certificate and its verification" \
    'render --set adapter.tls.mode=$mode --set reconciler.podMonitor.enabled=true >"$work/pm.yaml" &&
       python3 "$here/check_tls.py" $mode "$work/pm.yaml" --pod-monitor'
done
check "reconciler.podMonitor with tls.mode=secret and the user's status Secret" \
  'render --set adapter.tls.mode=secret --set adapter.tls.secretName=mine --set adapter.tls.caBundle=Q0E= \
     --set reconciler.podMonitor.enabled=true --set reconciler.statusTls.secretName=status \
     >"$work/pm.yaml" && python3 "$here/check_tls.py" secret "$work/pm.yaml" --pod-monitor'
check "reconciler.podMonitor with tls.mode=secret and no status Secret is refused" \
  '! render --set adapter.tls.mode=secret --set adapter.tls.secretName=mine --set adapter.tls.caBundle=Q0E= \
     --set reconciler.podMonitor.enabled=true >/dev/null 2>&1'

# Components can be installed alone; monitoring objects only when asked for.
check "adapter.enabled=false renders no adapter object" \
  '! render --set adapter.enabled=false | contains "name: gpuscale-adapter"'
check "reconciler.enabled=false renders no reconciler object" \
  '! render --set reconciler.enabled=false | contains "name: gpuscale-reconciler"'
check "the reconciler starts observe-only" 'contains -- "- --mode=observe" "$work/default.yaml"'
check "reconciler.mode=act renders --mode=act" \
  'render --set reconciler.mode=act | contains -- "- --mode=act"'
check "monitors are opt-in" '! grep -q "kind: ServiceMonitor\|kind: PodMonitor" "$work/default.yaml"'
check "ServiceMonitor, PodMonitor and the Triton example when enabled" \
  '[ "$(render --set adapter.serviceMonitor.enabled=true --set reconciler.podMonitor.enabled=true \
        --set tritonPodMonitor.enabled=true | grep -c "kind: ServiceMonitor\|kind: PodMonitor")" = 3 ]'
check "an existing rules ConfigMap replaces the chart's" \
  '[ "$(render --set adapter.rules.existingConfigMap=my-rules | grep -c "name: my-rules\|name: gpuscale-adapter-config")" = 1 ]'
check "Prometheus credentials are mounted from Secrets" \
  'render --set adapter.prometheus.bearerTokenSecret.name=prom-token \
     --set adapter.prometheus.caSecret.name=prom-ca | contains -- "--prometheus-token-file=/var/run/prometheus-auth/token/token"'
check "no external-metrics fallback flag by default (the adapter's defaults)" \
  '! grep -q -- "--external-metrics-fallback" "$work/default.yaml"'
check "every external-metrics fallback value becomes its flag, the files from their Secrets" \
  'render -f "$here/fallback-values.yaml" >"$work/fallback.yaml" &&
     python3 "$here/check_fallback.py" "$work/fallback.yaml"'
check "an external-metrics fallback URL that is not https is refused" \
  '! render --set adapter.externalMetricsFallback.url=http://keda >/dev/null 2>&1'
check "external-metrics fallback values without its URL are refused" \
  '! render --set adapter.externalMetricsFallback.timeout=3s >/dev/null 2>&1'
check "imagePullSecrets, extra env/volumes/containers, pod labels and annotations, ServiceAccount annotations, affinity, topology spread, tolerations and securityContext reach the pods" \
  'render -f "$here/extra-values.yaml" >"$work/extras.yaml" && python3 "$here/check_extras.py" "$work/extras.yaml"'
check "the default render has no imagePullSecrets" '! grep -q imagePullSecrets "$work/default.yaml"'

# values.schema.json: every value of values.yaml has an entry, unknown keys and wrong types fail.
check "values.schema.json and values.yaml list the same keys" \
  'python3 "$here/check_schema.py" "$chart/values.yaml" "$chart/values.schema.json"'
refused() { # WHAT ARGS...: the render fails and says why
  if render "$@" >"$work/refused.out" 2>&1; then return 1; fi
  grep -qi "schema\|additional\|invalid\|required" "$work/refused.out" || { cat "$work/refused.out"; false; }
}
check "a misspelt top-level value is refused" 'refused --set adapterr.enabled=false'
check "a misspelt nested value is refused" 'refused --set adapter.tls.moed=insecure'
check "a misspelt value in a values file is refused" \
  'printf "reconciler:\n  podAnotations: {a: b}\n" >"$work/typo.yaml" && refused -f "$work/typo.yaml"'
check "a value of the wrong type is refused" 'refused --set adapter.replicas=two'
check "a reconciler.mode other than observe or act is refused" 'refused --set reconciler.mode=on'

# Names: after the release (fullname), and every reference between objects still finds its object.
check "release gpuscale: the names of manifests/ (gpuscale-adapter, gpuscale-reconciler, ...)" \
  'python3 "$here/check_names.py" "$work/default.yaml" gpuscale-'
check "another release name prefixes every object, references intact" \
  'render_as prod >"$work/prod.yaml" && python3 "$here/check_names.py" "$work/prod.yaml" prod-gpuscale-'
check "another release name in act mode: the write grants' names and references intact" \
  'render_as prod --set reconciler.mode=act >"$work/prod-act.yaml" &&
     python3 "$here/check_names.py" "$work/prod-act.yaml" prod-gpuscale-'
names_in_every_tls_mode() {
  local mode
  for mode in selfSigned insecure certManager; do
    render_as prod --set fullnameOverride=gs --set adapter.tls.mode=$mode \
      --set reconciler.podMonitor.enabled=true >"$work/gs.yaml" &&
      python3 "$here/check_names.py" "$work/gs.yaml" gs- || return 1
  done
}
check "fullnameOverride names every object, references intact (every TLS mode, with the PodMonitor)" names_in_every_tls_mode
check "nameOverride names every object, references intact" \
  'render_as prod --set nameOverride=metrics >"$work/name.yaml" &&
     python3 "$here/check_names.py" "$work/name.yaml" prod-metrics-'
check "podLabels reach the pods, not the selectors" \
  'render --set adapter.podLabels.team=ml --set reconciler.podLabels.team=ml >"$work/labels.yaml" &&
     python3 "$here/check_names.py" "$work/labels.yaml" gpuscale- team=ml'

# ServiceAccounts and RBAC: the chart's, or the user's.
check "serviceAccount.create=false: no ServiceAccount, the pods and bindings use the given one" \
  'render --set adapter.serviceAccount.create=false --set adapter.serviceAccount.name=metrics-sa \
     --set reconciler.serviceAccount.create=false --set reconciler.serviceAccount.name=gpu-sa \
     >"$work/sa.yaml" && ! grep -q "^kind: ServiceAccount" "$work/sa.yaml" &&
   [ "$(grep -c "serviceAccountName: metrics-sa\|serviceAccountName: gpu-sa" "$work/sa.yaml")" = 2 ] &&
   grep -q "name: metrics-sa" "$work/sa.yaml" && grep -q "name: gpu-sa" "$work/sa.yaml"'
check "serviceAccount.create=false without a name is refused" \
  'refused --set reconciler.serviceAccount.create=false'
check "serviceAccount.name renames the chart's ServiceAccount and its bindings" \
  'render --set adapter.serviceAccount.name=custom >"$work/sa-name.yaml" &&
     [ "$(grep -c "name: custom$" "$work/sa-name.yaml")" -ge 4 ]'
check "rbac.create=false renders no Role, ClusterRole or binding" \
  '! render --set rbac.create=false | contains "^kind: \(Cluster\)\?Role\(Binding\)\?$"'
check "reconciler.admissionPolicy.enabled=false renders no admission policy" \
  '! render --set reconciler.admissionPolicy.enabled=false | contains "^kind: ValidatingAdmissionPolicy"'
check "reconciler.admissionPolicy.validationActions reach every binding" \
  '[ "$(render --set "reconciler.admissionPolicy.validationActions={Warn,Audit}" |
      grep -c "validationActions: \[\"Warn\",\"Audit\"\]")" = 7 ]'
check "an unknown validation action is refused" \
  'refused --set "reconciler.admissionPolicy.validationActions={Block}"'

# The uninstall path: in act mode, a pre-delete hook Job runs cleanup (it stops the reconciler first).
check "observe mode renders no uninstall hook" '! contains "helm.sh/hook: pre-delete" "$work/default.yaml"'
check "act mode: a pre-delete Job runs cleanup, stopping the reconciler, as its own ServiceAccount" \
  'render --set reconciler.mode=act >"$work/act.yaml" &&
   python3 - "$work/act.yaml" <<"PY"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
hooks = [d for d in docs if d["metadata"].get("annotations", {}).get("helm.sh/hook") == "pre-delete"]
kinds = sorted(d["kind"] for d in hooks)
assert kinds == ["ClusterRole", "ClusterRoleBinding", "Job", "Role", "RoleBinding", "ServiceAccount"], kinds
job = next(d for d in hooks if d["kind"] == "Job")
pod = job["spec"]["template"]["spec"]
args = pod["containers"][0]["args"]
assert args[0] == "cleanup" and "--stop-deployment=gpuscale-reconciler" in args, args
assert "--state-config-map=gpuscale-reconciler-state" in args, args
assert pod["serviceAccountName"] == "gpuscale-reconciler-cleanup", pod
assert not any(a.startswith("--restore-stock-configs") for a in args), args
PY'
check "uninstallCleanup.restoreStockConfigs reaches the Job" \
  'render --set reconciler.mode=act --set reconciler.uninstallCleanup.restoreStockConfigs=true |
     contains "^        - --restore-stock-configs$"'
check "uninstallCleanup.enabled=false renders no hook" \
  '! render --set reconciler.mode=act --set reconciler.uninstallCleanup.enabled=false |
     contains "helm.sh/hook: pre-delete"'
check "an unknown uninstallCleanup key is refused" 'refused --set reconciler.uninstallCleanup.wait=1m'

# Images: tags default to the chart's appVersion (version_test.sh checks it is VERSION's).
app_version=$(sed -n "s/^appVersion: *\"\?\([^\"]*\)\"\?$/\1/p" "$chart/Chart.yaml")
check "image tags default to appVersion ($app_version)" \
  '[ "$(grep -c "image: gpuscale-\(adapter\|reconciler\):$app_version$" "$work/default.yaml")" = 2 ]'
check "an image tag value wins over appVersion" \
  'render --set adapter.image.tag=abc | contains "image: gpuscale-adapter:abc$"'

# NOTES.txt, what helm install prints: helm template leaves it out, so a copy of the chart renders it
# into a ConfigMap (helm install --dry-run would need a cluster).
notes() { # helm values... -> the rendered NOTES.txt
  rm -rf "$work/notes-chart"
  cp -r "$chart" "$work/notes-chart"
  printf '%s\n' 'apiVersion: v1' 'kind: ConfigMap' 'metadata: {name: notes}' \
    'data: {NOTES.txt: {{ include (print $.Template.BasePath "/NOTES.txt") . | quote }}}' \
    >"$work/notes-chart/templates/zz-notes.yaml"
  "$helm" template gpuscale "$work/notes-chart" --namespace gpuscale "$@" \
    --show-only templates/zz-notes.yaml | python3 -c 'import sys, yaml; print(yaml.safe_load(sys.stdin)["data"]["NOTES.txt"])'
}
check "NOTES.txt: the checks for both programs" \
  'notes >"$work/notes.txt" && grep -q "kubectl get apiservices" "$work/notes.txt" &&
     grep -q "gpuscale-adapter explain" "$work/notes.txt" &&
     grep -q "get lease gpuscale-reconciler" "$work/notes.txt" || { cat "$work/notes.txt"; false; }'
check "NOTES.txt with the adapter alone names no reconciler" \
  'notes --set reconciler.enabled=false >"$work/notes-adapter.txt" &&
     grep -q "gpuscale-adapter" "$work/notes-adapter.txt" && ! grep -qi "reconciler" "$work/notes-adapter.txt"'
check "NOTES.txt: observe-only by default, how to switch to act, the off-ramp" \
  'grep -q "OBSERVE-ONLY" "$work/notes.txt" && grep -q "reconciler.mode=act" "$work/notes.txt" &&
     grep -q "gpuscale-reconciler cleanup --state-namespace gpuscale" "$work/notes.txt"'
check "NOTES.txt in observe mode: configmaps init with the release's ConfigMap names" \
  'grep -q "gpuscale-reconciler configmaps init --operator-namespace gpu-operator --mig-config-map gpuscale-mig-parted-config --device-plugin-config-map device-plugin-config$" "$work/notes.txt"'
check "NOTES.txt in observe mode: preflight with the release's namespaces and names" \
  'grep -q "gpuscale-reconciler preflight --operator-namespace gpu-operator --state-namespace gpuscale .*--state-config-map gpuscale-reconciler-state --leader-elect-name gpuscale-reconciler$" "$work/notes.txt"'
check "NOTES.txt with reconciler.mode=act says it acts and that helm uninstall cleans up" \
  'notes --set reconciler.mode=act >"$work/notes-act.txt" && contains "It ACTS" "$work/notes-act.txt" &&
     contains "helm uninstall runs that cleanup itself" "$work/notes-act.txt"'
check "NOTES.txt follows the release's names" \
  'notes --set fullnameOverride=gs | contains "get lease gs-reconciler"'

check "the chart's default rules are rules/triton.yaml" 'cmp -s "$chart/files/adapter-rules.yaml" "$src/rules/triton.yaml"'
check "the chart's default policy is manifests/reconciler/policy.yaml" \
  'cmp -s "$chart/files/reconciler-policy.yaml" "$src/manifests/reconciler/policy.yaml"'

if [ $failures -gt 0 ]; then
  echo "$failures chart check(s) failed"
  exit 1
fi
echo "chart checks passed"
