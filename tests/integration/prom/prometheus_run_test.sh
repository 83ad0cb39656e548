#!/usr/bin/env bash
# tests/support/prometheus_run.sh starts a Prometheus behind a route prefix that answers queries, and stops it.
set -euo pipefail
[ -x /usr/bin/prometheus ] || exit 77
run="$GPUSCALE_SOURCE_DIR/tests/support/prometheus_run.sh"
dir=$(mktemp -d)
trap '"$run" stop "$dir"; rm -rf "$dir"' EXIT
url=$("$run" start "$dir" --route-prefix /prom)
[ "$url" = "$(cat "$dir/url")" ]
case $url in http://127.0.0.1:*/prom) ;; *) echo "unexpected url $url" >&2; exit 1 ;; esac
body=$(curl -sf "$url/api/v1/query?query=1%2B1")
echo "$body" | grep -q '"resultType":"scalar"' || { echo "bad answer: $body" >&2; exit 1; }
echo "$body" | grep -q '"2"\]' || { echo "bad value: $body" >&2; exit 1; }
pid=$(cat "$dir/pid")
"$run" stop "$dir"
if kill -0 "$pid" 2>/dev/null; then echo "prometheus $pid still running" >&2; exit 1; fi
