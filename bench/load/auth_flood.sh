#!/usr/bin/env bash
# An authorized HPA-style caller's latency alone and under an authentication flood: runs the
# scenario of tests/integration/adapter/adapter_auth_flood_test.cpp (the real adapter in delegated
# mode, TokenReviews of unknown tokens taking 8 s, 200 new junk tokens a second for 30 s beside a
# caller with a valid token at 20 requests/s) RUNS times and prints, per run, the caller's median
# alone (the baseline, same run) and under the flood, and what the junk was answered.
# The test asserts only what must hold functionally; the latencies are compared here.
# Usage: bench/load/auth_flood.sh [build dir] ; env RUNS (3)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-3}
test_bin="$build/tests/adapter_auth_flood_test"
[ -x "$test_bin" ] || {
  echo "build it first: cmake --build $build --target adapter_auth_flood_test" >&2
  exit 1
}
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
for run in $(seq "$runs"); do
  out=$(GPUSCALE_BINARY_DIR="$build" "$test_bin" 2>&1) || {
    echo "$out" | tail -40
    echo "run $run: the test failed" >&2
    exit 1
  }
  echo "run $run: $(echo "$out" | grep '^caller median')"
  echo "run $run: $(echo "$out" | grep '^junk:')"
done
