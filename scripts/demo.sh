#!/usr/bin/env bash
# The demo: the inference autoscaling story of scenario (a) on the test cluster, in a few minutes.
#
# Installs what is missing and builds the test control plane (scripts/setup.sh), builds
# gpuscale-adapter, gpuscale-sim and gpuscale-reconciler, then runs bench/scenario/run.sh a100-7x1g
# with the reconciler on, its load pattern compressed 4x: a real kube-apiserver, controller-manager
# (the real HPA controller) and scheduler with KWOK, gpuscale-sim as the GPU Operator of one A100 at
# all-1g.5gb and as the Triton pods' load, a real Prometheus, gpuscale-adapter behind the aggregator,
# and gpuscale-reconciler. The HPA scales Triton on avg_time_queue_us up to the 7 slices; the
# reconciler time-slices the slices, raises maxReplicas, and queue time comes back under the 1 s SLO.
# Along the way it prints `kubectl get --raw` of the custom metrics API through kube-apiserver and
# `kubectl get hpa`; at the end the result line and the chart (GPUSCALE_DEMO_OUT, default
# build/demo/timeline.svg). Everything it started is stopped when it exits (also on Ctrl-C).
#
# `scripts/demo.sh --standalone` is the quick demo instead: no cluster, the adapter alone against a real
# Prometheus scraping three Triton-like pods (scripts/lib/demo_standalone.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --standalone ]; then exec scripts/lib/demo_standalone.sh; fi

scripts/setup.sh
build=${GPUSCALE_BUILD_DIR:-build}
echo "demo: building gpuscale-adapter, gpuscale-sim and gpuscale-reconciler in $build/"
cmake -S . -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j2 --target gpuscale-adapter gpuscale-sim gpuscale-reconciler >/dev/null

out=${GPUSCALE_DEMO_OUT:-$build/demo}
speed=${GPUSCALE_DEMO_SPEED:-4}
mkdir -p "$out"
out=$(cd "$out" && pwd)
run_pid=
cleanup() {
  if [ -n "$run_pid" ]; then
    kill -TERM "$run_pid" 2>/dev/null || true # run.sh stops its parts on exit
    wait "$run_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "demo: scenario a100-7x1g, reconciler on, speed $speed (logs: $out/run/, $out/run.log)"
GPUSCALE_BINARY_DIR=$(cd "$build" && pwd) bench/scenario/run.sh a100-7x1g --reconciler on \
  --speed "$speed" --out "$out" >"$out.log" 2>&1 &
run_pid=$!

kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }
show() { # what command...
  echo
  echo "\$ kubectl $*"
  kc "$@" || true
}
raw=/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/avg_time_queue_us
pretty() { # a MetricValueList as "pod value" lines; anything else (an error) as it is
  python3 -c 'import json,sys
text = sys.stdin.read()
try:
    items = json.loads(text).get("items", [])
except ValueError:
    print(text.strip())
    sys.exit(0)
for i in items:
    print("  %-32s %s" % (i["describedObject"]["name"], i["value"]))'
}

# Wait for the harness to bring the cluster and the Deployment up (its log says when).
until grep -q "running until" "$out.log" 2>/dev/null; do
  kill -0 "$run_pid" 2>/dev/null || { tail -n 20 "$out.log" >&2; exit 1; }
  sleep 2
done
# shellcheck disable=SC1091
source "$out/run/cluster/env"
KUBECTL=${KUBECTL:-tests/cluster/bin/kubectl}
show get --raw /apis/custom.metrics.k8s.io/v1beta1
while kill -0 "$run_pid" 2>/dev/null; do
  echo
  echo "---- $(date -u +%T)  (load $(tail -n 1 "$out/samples.jsonl" 2>/dev/null | python3 -c '
import json,sys
s = json.loads(sys.stdin.read() or "{}")
print("%.1f req/s at t=%ss, %s pods Running, ceiling %s" % (s.get("load_rps") or 0, s.get("t"), s.get("running"), s.get("ceiling")))' 2>/dev/null))"
  echo "\$ kubectl get --raw '$raw'"
  kc get --raw "$raw" 2>&1 | pretty || true
  show get hpa triton
  sleep 20
done
wait "$run_pid" && rc=0 || rc=$?
run_pid=
echo
tail -n 1 "$out.log"
[ $rc -eq 0 ] || { echo "demo: the scenario run failed (rc=$rc); see $out.log" >&2; exit 1; }
echo "demo: chart $out/timeline.svg; samples $out/samples.jsonl; everything stopped"
