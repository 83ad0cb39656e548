#!/usr/bin/env bash
# Builds the test control plane from the Go module proxy: kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl (k8s/), etcd (etcd/) and kwok (kwok/), each from its own wrapper module;
# Helm (helm/), which the chart tests use; Prometheus 3 (prometheus/, into bin/prometheus3/), the
# backend test matrix's other release; VictoriaMetrics single-node (victoriametrics/, into
# bin/victoriametrics/), the matrix's non-Prometheus backend; and kubelet and kube-proxy of the same
# Kubernetes version for the optional real node (up.sh --real-node). In the extra group: Thanos
# (thanos/, into bin-extra/thanos/), run as sidecar + query in front of a Prometheus, and KEDA's
# operator and metrics server (keda/, into bin-extra/keda/ with the CRDs and RBAC of its config/),
# for the e2e test of gpuscale next to KEDA. All are pure Go (CGO_ENABLED=0), so they are static.
#
# Idempotent and cached: module and build caches and the binaries live in a per-user cache directory
# outside the repository. The binaries come in two groups, each keyed by its own stamp (hash of the
# group's wrapper go.mod/go.sum files, its build steps in this script and the Go version), so an
# unchanged checkout only relinks them: `core` (everything above but KEDA; most tests need it) is
# linked as tests/cluster/bin, `extra` (the parts only a few tests need, ctest label `go-extra`) as
# tests/cluster/bin-extra. The test command builds the extra group while the other tests run.
#
# A third group, `k8s-<minor>` (e.g. k8s-1.34), builds only the Kubernetes commands of an older
# supported line from its own wrapper module (k8s-1.34/) into bin-k8s-1.34-<stamp>, linked as
# tests/cluster/bin-k8s-1.34; compat.sh runs the end-to-end core on it (with the core group's etcd,
# kwok and Helm). It is not part of `all`.
#
# Usage: build.sh [core|extra|all|k8s-<minor>] (default all).
# Environment: GO (go binary), GPUSCALE_CLUSTER_CACHE (cache root), GPUSCALE_CLUSTER_JOBS (go build -p).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
group=${1:-all}
case $group in
  core | extra | all) ;;
  k8s-*) [ -f "$here/$group/go.mod" ] || {
    echo "$0: no wrapper module $here/$group" >&2
    exit 2
  } ;;
  *)
    echo "usage: $0 [core|extra|all|k8s-<minor>]" >&2
    exit 2
    ;;
esac

# The Go toolchain, new enough for every wrapper module (lib/go-toolchain.sh says what is missing).
GO=$("$here/lib/go-toolchain.sh") || exit 1

cache=${GPUSCALE_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuscale/cluster}
mkdir -p "$cache"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOMODCACHE="$cache/gomod" GOCACHE="$cache/gocache"
jobs=${GPUSCALE_CLUSTER_JOBS:-2}

# Several worktrees on one machine share the cache: one build at a time.
exec 9>"$cache/.lock"
flock 9

# run_group NAME LINK BUILDER MODULE-DIRS...: builds the group (BUILDER, writing into $out.partial)
# unless its stamp is complete, then points tests/cluster/LINK at it.
run_group() {
  local name=$1 link=$2 builder=$3
  shift 3
  local stamp files=()
  for m in "$@"; do files+=("$here/$m/go.mod" "$here/$m/go.sum"); done
  stamp=$(cat "${files[@]}" <(declare -f run_group build build_k8s "$builder") <("$GO" version) |
    sha256sum | cut -c1-16)
  out="$cache/bin-$name-$stamp"
  if [ ! -f "$out/.complete" ]; then
    rm -rf "$out.partial"
    mkdir -p "$out.partial"
    log="$cache/build-$name-$stamp.log"
    echo "cluster build: building $name into $out (log: $log)"
    "$builder"
    touch "$out.partial/.complete"
    rm -rf "$out"
    mv "$out.partial" "$out"
  else
    echo "cluster build: $name up to date ($out)"
  fi
  [ ! -d "$here/$link" ] || [ -L "$here/$link" ] || rm -rf "${here:?}/$link"
  ln -sfn "$out" "$here/$link.tmp.$$"
  mv -Tf "$here/$link.tmp.$$" "$here/$link"
  # Keep the five newest builds of the group (other worktrees may still point at an older stamp).
  ls -1dt "$cache/bin-$name"-* 2>/dev/null | grep -v '\.partial$' | tail -n +6 | xargs -r rm -rf
}

build() { # module-dir output-dir-or-file ldflags tags packages...
  local dir=$1 dst=$2 ld=$3 tags=$4
  shift 4
  echo "== $(date -u +%FT%TZ) $dir: $*" >>"$log"
  (cd "$here/$dir" && "$GO" mod download >>"$log" 2>&1 &&
    nice -n 10 "$GO" build -p "$jobs" -trimpath -tags="$tags" -ldflags="$ld" -o "$dst" "$@") \
    >>"$log" 2>&1 || {
    echo "cluster build: $dir failed; tail of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  }
}

# build_k8s MODULE-DIR: the control plane's commands and kubectl, then the node binaries (in their own
# go build so the log's timestamps show what they add), from the wrapper module MODULE-DIR. Version
# stamping as the upstream release build does (hack/lib/version.sh); the minor must be right because
# it drives feature-gate emulation floors.
build_k8s() {
  local dir=$1 kver kmaj kmin kld p
  kver=$(cd "$here/$dir" && "$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
  kmaj=${kver#v}
  kmaj=${kmaj%%.*}
  kmin=$(echo "$kver" | cut -d. -f2)
  kld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kld="$kld -X $p.gitVersion=$kver -X $p.gitMajor=$kmaj -X $p.gitMinor=$kmin -X $p.gitTreeState=clean"
  done
  build "$dir" "$out.partial/" "$kld" "selinux,notest,grpcnotrace" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  build "$dir" "$out.partial/" "$kld" "selinux,notest,grpcnotrace" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
  "$out.partial/kube-apiserver" --version >>"$log"
  "$out.partial/kubelet" --version >>"$log"
}

build_core() {
  build etcd "$out.partial/etcd" "-s -w" "" go.etcd.io/etcd/server/v3
  build kwok "$out.partial/" "-s -w" "" sigs.k8s.io/kwok/cmd/kwok
  build helm "$out.partial/" "-s -w" "" helm.sh/helm/v3/cmd/helm
  build_k8s k8s

  # Prometheus 3 for the backend test matrix (Debian's 2.42 is the other release); the module's
  # v0.3XX.Y is release 3.XX.Y. The tests use static scrape targets only, so the service-discovery
  # plugins (cloud SDKs, client-go) are left out, which halves the compile.
  pver=$(cd "$here/prometheus" && "$GO" list -m -f '{{.Version}}' github.com/prometheus/prometheus)
  prel=${pver#v0.}
  prel="${prel:0:1}.$((10#${prel:1:2})).${pver##*.}"
  build prometheus "$out.partial/prometheus3/" \
    "-s -w -X github.com/prometheus/common/version.Version=$prel" remove_all_sd \
    github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool

  # VictoriaMetrics single-node for the backend test matrix. Pure Go without cgo (its zstd falls back
  # to the Go implementation); the version string is what `-version` and its own /metrics report.
  vm=github.com/VictoriaMetrics/VictoriaMetrics
  vmver=$(cd "$here/victoriametrics" && "$GO" list -m -f '{{.Version}}' "$vm")
  build victoriametrics "$out.partial/victoriametrics/" \
    "-s -w -X $vm/lib/buildinfo.Version=victoria-metrics-$vmver" "" "$vm/app/victoria-metrics"

  # The KWOK stage definitions ship in its module zip; keep the ones up.sh uses next to the binaries.
  kwokdir=$(cd "$here/kwok" && "$GO" list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  mkdir -p "$out.partial/kwok-stages"
  cp "$kwokdir"/kustomize/stage/node/fast/node-initialize.yaml \
    "$kwokdir"/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    "$kwokdir"/kustomize/stage/pod/fast/pod-ready.yaml \
    "$kwokdir"/kustomize/stage/pod/fast/pod-complete.yaml \
    "$kwokdir"/kustomize/stage/pod/fast/pod-delete.yaml "$out.partial/kwok-stages/"
  chmod -R u+w "$out.partial/kwok-stages"

  "$out.partial/etcd" --version >>"$log"
  "$out.partial/prometheus3/prometheus" --version >>"$log"
  "$out.partial/victoriametrics/victoria-metrics" -version >>"$log"
  "$out.partial/kwok" --version >>"$log" 2>&1 || true
}

# The parts only a few tests need (the `go-extra` ctest label): built after the core group, and by
# the test command while the other tests run.
build_extra() {
  # Thanos for the backend test matrix (sidecar + query in front of a Prometheus). Its wrapper module
  # repeats Thanos' own `replace` directives, which do not apply to a module that requires it.
  # `slicelabels` as in the upstream release build (Thanos converts label slices without copying);
  # `grpcnotrace` drops gRPC's x/net/trace debug pages.
  local tver
  tver=$(cd "$here/thanos" && "$GO" list -m -f '{{.Version}}' github.com/thanos-io/thanos)
  build thanos "$out.partial/thanos/" \
    "-s -w -X github.com/prometheus/common/version.Version=${tver#v}" "netgo,slicelabels,grpcnotrace" \
    github.com/thanos-io/thanos/cmd/thanos
  "$out.partial/thanos/thanos" --version >>"$log" 2>&1

  # KEDA's operator (`keda` in its images) and metrics server (`keda-adapter`), named and stamped as
  # its Makefile does, with the manifests its module zip carries (CRDs, namespace, ServiceAccount,
  # RBAC) for the e2e test of gpuscale next to KEDA. Its scalers' cloud SDKs make this the longest
  # Go build after Kubernetes; it shares little with the control plane's (the dependency versions
  # under k8s.io differ), see docs/benchmarks/ci-cost.md.
  local keda=github.com/kedacore/keda/v2 kedaver kedald kedadir
  kedaver=$(cd "$here/keda" && "$GO" list -m -f '{{.Version}}' "$keda")
  kedald="-s -w -X $keda/version.Version=${kedaver#v}"
  mkdir -p "$out.partial/keda/config"
  build keda "$out.partial/keda/keda" "$kedald" "" "$keda/cmd/operator"
  build keda "$out.partial/keda/keda-adapter" "$kedald" "" "$keda/cmd/adapter"
  kedadir=$(cd "$here/keda" && "$GO" list -m -f '{{.Dir}}' "$keda")
  cp -r "$kedadir"/config/{crd,general,service_account,rbac,metrics-server} \
    "$out.partial/keda/config/"
  chmod -R u+w "$out.partial/keda/config"
  echo "keda $kedaver" >>"$log"
}

core_modules=(k8s etcd kwok helm prometheus victoriametrics)
case $group in
  core) run_group core bin build_core "${core_modules[@]}" ;;
  extra) run_group extra bin-extra build_extra thanos keda ;;
  all)
    run_group core bin build_core "${core_modules[@]}"
    run_group extra bin-extra build_extra thanos keda
    ;;
  k8s-*)
    # The group's builder is build_k8s on its wrapper module; the stamp covers both.
    eval "build_$group() { build_k8s $group; }"
    run_group "$group" "bin-$group" "build_$group" "$group"
    ;;
esac
echo "cluster build: done"
