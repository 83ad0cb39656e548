#!/usr/bin/env bash
# `gpuscale-adapter rules check|render` end to end: exit codes, exact output, positioned errors.
set -uo pipefail
bin="${GPUSCALE_BINARY_DIR:?}/bin/gpuscale-adapter"
src="${GPUSCALE_SOURCE_DIR:?}"
[ -x "$bin" ] || { echo "skip: $bin not built"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect NAME EXPECTED_EXIT EXPECTED_STDOUT EXPECTED_STDERR -- ARGS...
# An expected output of '*' is not checked; one ending in '...' is a prefix.
expect() {
  local name=$1 code=$2 out=$3 err=$4
  shift 5
  "$bin" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local ok=1
  [ "$got" = "$code" ] || ok=0
  for pair in "out:$out" "err:$err"; do
    local which=${pair%%:*} want=${pair#*:}
    local have
    have=$(cat "$work/$which")
    if [ "$want" = "*" ]; then continue; fi
    if [[ "$want" == *... ]]; then
      [[ "$have" == "${want%...}"* ]] || ok=0
    else
      [ "$have" = "$want" ] || ok=0
    fi
  done
  if [ $ok = 1 ]; then
    echo "ok   $name"
  else
    echo "FAIL $name (exit $got, want $code)"
    echo "  stdout: $(cat "$work/out")"
    echo "  stderr: $(cat "$work/err")"
    failures=$((failures + 1))
  fi
}

triton="$src/rules/triton.yaml"

expect "render the triton rule" 0 \
  'avg(delta(nv_inference_queue_duration_us{namespace="default",pod=~"a|b"}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod=~"a|b"}[30s]))) by (pod)' '' -- \
  rules render "$triton" --metric avg_time_queue_us --resource pods --names a,b --namespace default

expect "render accepts --flag=value, singular and kind resource names" 0 \
  'avg(delta(nv_inference_queue_duration_us{namespace="default",pod="a"}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod="a"}[30s]))) by (pod)' '' -- \
  rules render "$triton" --metric=avg_time_queue_us --resource=Pod --names=a --namespace=default

expect "render with a metric selector" 0 \
  'avg(delta(nv_inference_queue_duration_us{model=~"densenet|resnet",namespace="default",pod="a"}[30s])/(1+delta(nv_inference_request_success{model=~"densenet|resnet",namespace="default",pod="a"}[30s]))) by (pod)' '' -- \
  rules render "$triton" --metric avg_time_queue_us --resource pods --names a --namespace default \
  --metric-selector 'model in (resnet,densenet)'

expect "render a namespace metric (namespaces resource)" 0 \
  'avg(delta(nv_inference_queue_duration_us{namespace="default"}[30s])/(1+delta(nv_inference_request_success{namespace="default"}[30s]))) by (namespace)' '' -- \
  rules render "$triton" --metric avg_time_queue_us --resource namespaces --names default

expect "render escapes names that would inject PromQL" 0 \
  'avg(delta(nv_inference_queue_duration_us{namespace="default",pod=~"a\"\\}|x|\\.\\*"}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod=~"a\"\\}|x|\\.\\*"}[30s]))) by (pod)' '' -- \
  rules render "$triton" --metric avg_time_queue_us --resource pods --names 'a"},x,.*' --namespace default

expect "render with the series name given (default rules)" 0 \
  'sum(rate(container_cpu_usage_seconds_total{namespace="ns",pod="p",container!="POD"}[5m])) by (pod)' '' -- \
  rules render "$src/rules/prometheus-adapter-defaults.yaml" --metric cpu_usage --resource pods \
  --names p --namespace ns --series container_cpu_usage_seconds_total

expect "render an external metric" 0 \
  'sum(vllm:num_requests_waiting{model_name="llama",namespace="ml"}) by (model_name)' '' -- \
  rules render "$src/rules/vllm.yaml" --metric vllm_model_requests_waiting --external --namespace ml \
  --metric-selector model_name=llama

expect "render an unknown metric" 2 '' "$triton: no custom rule turns a series it names into metric \"nope\" for pods..." -- \
  rules render "$triton" --metric nope --resource pods --names a

expect "render a resource the rule cannot label" 2 '' '*' -- \
  rules render "$triton" --metric avg_time_queue_us --resource services --names a --namespace default

expect "render an unknown resource" 2 '' 'invalid --resource: the server doesn'"'"'t have a resource type "widgets"' -- \
  rules render "$triton" --metric avg_time_queue_us --resource widgets --names a

expect "render without names" 2 '' 'render needs at least one object name (--names a,b,...)' -- \
  rules render "$triton" --metric avg_time_queue_us --resource pods --namespace default

expect "render with an unsupported selector operator" 2 '' '*' -- \
  rules render "$triton" --metric avg_time_queue_us --resource pods --names a --metric-selector 'x>1'

expect "render with an unknown flag" 2 '' 'gpuscale-adapter rules render: unknown flag: --bogus...' -- \
  rules render "$triton" --metric m --resource pods --bogus 1

expect "check the triton rule" 0 'rules[0]: custom seriesQuery "nv_inference_queue_duration_us{namespace!=\"\",pod!=\"\"}", 1 filter, name "nv_inference_queue_duration_us" as "avg_time_queue_us", resources: namespace→namespaces, pod→pods' '' -- \
  rules check "$triton"

for file in triton prometheus-adapter-defaults vllm dcgm resource-metrics; do
  expect "check rules/$file.yaml: no errors, no warnings" 0 '*' '' -- rules check "$src/rules/$file.yaml"
done

expect "check resourceRules: what they serve, not ignored" 0 'resourceRules.cpu: serves metrics.k8s.io/v1beta1 cpu of pods (label "pod", namespace label "namespace", containers by "container") and nodes (label "node"), window 5m0s
resourceRules.memory: serves metrics.k8s.io/v1beta1 memory of pods (label "pod", namespace label "namespace", containers by "container") and nodes (label "node"), window 5m0s' '' -- \
  rules check "$src/rules/resource-metrics.yaml"

cat >"$work/trap.yaml" <<'YAML'
rules:
- seriesQuery: '{__name__=~".*_total",namespace!=""}'
  resources: {template: "<<.Resource>>"}
  name:
    matches: "^(.*)_total$"
    as: "$1_per_second"
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)'
YAML
expect "check warns about the \$1_per_second trap, exit 0" 0 '*' \
  "$work/trap.yaml:6:10: warning: rules[0].name.as: \"\$1_per_second\" refers to capture group \"1_per_second\", which does not exist in \"^(.*)_total\$\", so it expands to \"\" (write \"\${1}_per_second\" for group 1 followed by \"_per_second\")" -- \
  rules check "$work/trap.yaml"

cat >"$work/unknown.yaml" <<'YAML'
rules:
- seriesQuery: up
  resources: {template: "<<.Resource>>"}
  name:
    matches: "^(.*)$"
    ass: "x"
YAML
expect "check an unknown key" 2 '' "$work/unknown.yaml:6:5: rules[0].name: unknown field \"ass\" (expected matches, as)" -- \
  rules check "$work/unknown.yaml"

printf 'rules:\n- seriesQuery: up\n  seriesFilters:\n  - is: a\n    isNot: b\n' >"$work/both.yaml"
expect "check a filter with both is and isNot" 2 '' "$work/both.yaml:4:5: rules[0].seriesFilters[0]: cannot have both an 'is' (\"a\") and 'isNot' (\"b\") expression in a single filter" -- \
  rules check "$work/both.yaml"

printf 'rules:\n- seriesQuery: up\n   bad: [\n' >"$work/malformed.yaml"
expect "check malformed YAML" 2 '' "$work/malformed.yaml:3:7: malformed YAML: illegal map value" -- \
  rules check "$work/malformed.yaml"

: >"$work/empty.yaml"
expect "check an empty file" 2 '' "$work/empty.yaml: the rule file is empty (expected rules, externalRules or resourceRules)" -- \
  rules check "$work/empty.yaml"

expect "check a missing file" 2 '' "$work/missing.yaml: unable to read rule file: No such file or directory" -- \
  rules check "$work/missing.yaml"

expect "check without a file" 2 '' 'gpuscale-adapter rules: check takes exactly one FILE...' -- rules check
expect "unknown rules subcommand" 2 '' 'gpuscale-adapter rules: unknown subcommand "lint"...' -- rules lint x
expect "unknown command" 2 '' 'gpuscale-adapter: unknown command "serve-nothing"...' -- serve-nothing
expect "help" 0 'usage: gpuscale-adapter [<command>] [arguments]...' '' -- --help
expect "prometheus-adapter's /adapter argument" 0 'usage: gpuscale-adapter [<command>] [arguments]...' \
  'W argument "/adapter" is ignored (prometheus-adapter'"'"'s binary path)' -- /adapter --help

if [ $failures -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
