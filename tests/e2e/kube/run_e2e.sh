#!/usr/bin/env bash
# Starts the real test control plane (tests/cluster/up.sh), runs the kube/auth end-to-end cases
# against it, and always tears it down. Exit 77 (skipped) when the cluster binaries are absent.
# Usage: run_e2e.sh CASES_BINARY [gtest args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
bin=${GPUSCALE_CLUSTER_BIN:-$src/tests/cluster/bin}
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
  if [ ! -x "$bin/$b" ]; then
    echo "cluster binaries absent ($bin/$b); run tests/cluster/build.sh: skipped"
    exit 77
  fi
done
cases=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-kube-e2e.XXXXXX")
cleanup() {
  "$src/tests/cluster/down.sh" "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
GPUSCALE_CLUSTER_BIN=$bin "$src/tests/cluster/up.sh" "$dir"
GPUSCALE_TEST_CLUSTER_DIR=$dir GPUSCALE_KUBECTL=$bin/kubectl "$cases" "$@"
