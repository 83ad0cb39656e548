#!/usr/bin/env bash
# `scripts/demo.sh --standalone` as a user runs it, minus setup and build (GPUSCALE_SKIP_SETUP=1 and this build's
# binaries): it must exit 0, show discovery and a value for each of the three Triton pods through kubectl, and
# leave nothing running or on disk.
set -uo pipefail
src="${GPUSCALE_SOURCE_DIR:?}"
build="${GPUSCALE_BINARY_DIR:?}"
for program in "$build/bin/gpuscale-adapter" "$build/bin/gpuscale-sim"; do
  [ -x "$program" ] || { echo "skip: $program not built"; exit 77; }
done
for program in prometheus kubectl curl python3; do
  command -v "$program" >/dev/null || { echo "skip: $program not installed"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

TMPDIR="$work" GPUSCALE_SKIP_SETUP=1 GPUSCALE_BUILD_DIR="$build" "$src/scripts/demo.sh" --standalone \
  >"$work/out" 2>"$work/err"
code=$?
cat "$work/out"
[ "$code" = 0 ] || { fail "demo exited $code"; cat "$work/err"; }

# Discovery lists the metric for pods (namespaced) and namespaces.
grep -q '"name":"pods/avg_time_queue_us","singularName":"","namespaced":true' "$work/out" ||
  fail "discovery does not list pods/avg_time_queue_us"
grep -q '"name":"namespaces/avg_time_queue_us","singularName":"","namespaced":false' "$work/out" ||
  fail "discovery does not list namespaces/avg_time_queue_us"

# The wildcard answer: one item per pod, each with a Kubernetes quantity.
pods=$(grep '^{"kind":"MetricValueList"' "$work/out" | /usr/bin/python3 -c '
import json, re, sys
for line in sys.stdin:
    for item in json.loads(line)["items"]:
        obj = item["describedObject"]
        if obj["kind"] == "Pod" and obj["namespace"] == "default" and item["metricName"] == "avg_time_queue_us" \
                and re.fullmatch(r"-?[0-9]+m?", item["value"]):
            print(obj["name"])' | sort | tr '\n' ' ')
[ "$pods" = "triton-0 triton-1 triton-2 " ] || fail "values for pods [$pods], want triton-0 triton-1 triton-2"

# Everything it started is gone: its temporary folder, and nothing answers on its ports any more.
leftover=$(find "$work" -maxdepth 1 -name 'gpuscale-demo.*' | head -n 1)
[ -z "$leftover" ] || fail "the demo left $leftover behind"
prometheus_url=$(sed -n 's/^demo: exporter on .*, prometheus at \(http:[^ ]*\)$/\1/p' "$work/out")
adapter_url=$(sed -n 's/^demo: gpuscale-adapter on \(https:[^ ]*\) (standalone)$/\1/p' "$work/out")
exporter=$(sed -n 's/^demo: exporter on \([0-9.:]*\),.*/\1/p' "$work/out")
[ -n "$prometheus_url" ] && [ -n "$adapter_url" ] && [ -n "$exporter" ] || fail "the demo did not say where it ran"
for url in "$prometheus_url/-/ready" "$adapter_url/healthz" "http://$exporter/metrics"; do
  if curl -sk -m 5 -o /dev/null "$url"; then fail "$url still answers after the demo"; fi
done

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "ok: demo --standalone showed the three pods' values and stopped everything"
