#!/usr/bin/env bash
# Runs the end-to-end core on an older supported Kubernetes line: the control plane, kubectl and the
# real node's kubelet and kube-proxy of that line (built by `build.sh k8s-<minor>` from the wrapper
# module tests/cluster/k8s-<minor>/, cached under its own stamp), with etcd, kwok and Helm of the core
# group. The tests: the control plane itself, the adapter through the aggregator, the HPA on the
# adapter's metrics with the faults of that test, the reconciler's scenario (a), and the install on
# the real node (root).
#
# Usage: tests/cluster/compat.sh [MINOR] [-- CTEST-ARGS...]   (MINOR default 1.34)
# Needs the release tree in $GPUSCALE_BINARY_DIR (default build/, as scripts/test.sh configures it).
# Exits non-zero when a test fails or is skipped (a skip would hide a line that was not tested).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
minor=1.34
if [ $# -gt 0 ] && [ "$1" != -- ]; then
  minor=$1
  shift
fi
[ "${1:-}" != -- ] || shift
build=${GPUSCALE_BINARY_DIR:-$src/build}
tests='^(cluster_control_plane|adapter_aggregation|adapter_hpa|scenario_a100_7x1g|install)$'

if [ ! -f "$here/k8s-$minor/go.mod" ]; then
  echo "compat: no wrapper module for Kubernetes $minor (tests/cluster/k8s-$minor)" >&2
  exit 2
fi
if [ ! -f "$build/CTestTestfile.cmake" ]; then
  echo "compat: no release tree in $build (configure and build it as scripts/test.sh does)" >&2
  exit 2
fi

"$here/build.sh" core
"$here/build.sh" "k8s-$minor"

# The binaries of the run: the core group's, with the Kubernetes commands of the older line.
mix=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-compat-$minor.XXXXXX")
trap 'rm -rf "$mix"' EXIT
core=$(cd "$here/bin" && pwd -P)
old=$(cd "$here/bin-k8s-$minor" && pwd -P)
for f in "$core"/*; do ln -s "$f" "$mix/"; done
for f in "$old"/*; do ln -sfn "$f" "$mix/"; done

version=$("$mix/kube-apiserver" --version)
case $version in
  "Kubernetes v$minor."*) ;;
  *)
    echo "compat: kube-apiserver reports '$version', expected $minor" >&2
    exit 1
    ;;
esac
echo "compat: $version, $("$mix/kubelet" --version | sed 's/Kubernetes //') kubelet"

log=$(mktemp "${TMPDIR:-/tmp}/gpuscale-compat-$minor.log.XXXXXX")
rc=0
GPUSCALE_CLUSTER_BIN=$mix ctest --test-dir "$build" --output-on-failure -R "$tests" "$@" |
  tee "$log" || rc=$?
if grep -q '\*\*\*Skipped' "$log"; then
  echo "compat: a test was skipped on Kubernetes $minor (see above)" >&2
  rc=1
fi
if ! grep -q '100% tests passed' "$log" && [ "$rc" -eq 0 ]; then
  rc=1
fi
rm -f "$log"
exit "$rc"
