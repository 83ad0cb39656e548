#!/usr/bin/env bash
# Discovery at scale on every backend of the test matrix, one after another in one run: Debian's
# Prometheus 2.42, Prometheus 3, VictoriaMetrics single-node and Thanos (sidecar + query in front
# of Debian's Prometheus; the last three built by tests/cluster/build.sh). Prints prom_discovery_bench's table for each (bench args are its
# arguments); exit 0 only when every backend's run succeeded and agreed with its series relist.
#
#   bench/scale/discovery_backends.sh [--build DIR (build)] [--only NAME]... [bench args]
#
# NAME is prometheus2, prometheus3, victoriametrics or thanos. --keep-data DIR keeps each backend's
# data in DIR/NAME (Thanos reads Prometheus' storage, so it reuses DIR/prometheus2 when that exists). VictoriaMetrics refuses `/api/v1/series` answers over -search.maxSeries (30,000 by
# default), so its run raises that flag to twice --series to have the baseline at all, and its query
# deadline (30 s by default, which a loaded machine exceeds on that relist) to 5 minutes.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build
only=()
args=()
keep=""
series=10000
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --keep-data) keep=$2; shift 2 ;;
    --series) series=$2; args+=("$1" "$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
bench=$build/bin/prom_discovery_bench
[ -x "$bench" ] || { echo "build prom_discovery_bench first ($bench)" >&2; exit 2; }
bin=$src/tests/cluster/bin
[ ${#only[@]} -gt 0 ] || only=(prometheus2 prometheus3 victoriametrics thanos)

status=0
for name in "${only[@]}"; do
  env=(env -u GPUSCALE_PROMETHEUS_DIR -u GPUSCALE_VICTORIAMETRICS_DIR -u GPUSCALE_THANOS_DIR)
  flags=()
  case $name in
    prometheus2) ;;
    prometheus3) env+=("GPUSCALE_PROMETHEUS_DIR=$bin/prometheus3") ;;
    victoriametrics)
      env+=("GPUSCALE_VICTORIAMETRICS_DIR=$bin/victoriametrics")
      flags+=(--server-flag "-search.maxSeries=$((series * 2))")
      # Its 30 s default query deadline cuts the relist short on a loaded machine.
      flags+=(--server-flag "-search.maxQueryDuration=5m") ;;
    thanos) env+=("GPUSCALE_THANOS_DIR=$bin-extra/thanos") ;;
    *) echo "unknown backend $name" >&2; exit 2 ;;
  esac
  data=()
  dir=$name
  [ "$name" != thanos ] || [ ! -d "$keep/prometheus2" ] || dir=prometheus2
  [ -z "$keep" ] || data=(--keep-data "$keep/$dir")
  echo "## $name ($(date -u +%FT%TZ))"
  "${env[@]}" "$bench" "${args[@]}" "${data[@]}" "${flags[@]}" || status=1
  echo
done
exit $status
