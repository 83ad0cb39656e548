#!/usr/bin/env bash
# Installs what building, testing and the demo need on a fresh Debian 12 machine. Idempotent; apt-get as root.
# Also builds the test control plane (tests/cluster, its core group) when Go is available; that build is
# cached. The extra group (Thanos, KEDA: only the tests labelled go-extra use it) is left to
# scripts/test.sh or `tests/cluster/build.sh extra`.
set -euo pipefail
cd "$(dirname "$0")/.."

# What building the programs needs (GPUSCALE_SETUP=build: the image build stage stops here).
packages=(
  build-essential cmake ninja-build pkg-config ca-certificates
  libboost-dev libboost-system-dev libssl-dev libcpprest-dev prometheus-cpp-dev nlohmann-json3-dev
  libyaml-cpp-dev libfmt-dev libspdlog-dev libre2-dev libgtest-dev libgmock-dev
)
# What the tests, benchmarks, sanitizer and fuzz passes, the demo and the image builds need.
if [ "${GPUSCALE_SETUP:-all}" != build ]; then
  packages+=(
    ccache git curl openssl libbenchmark-dev clang clang-format libclang-rt-14-dev
    prometheus hey wrk python3 python3-kubernetes python3-botocore buildah mmdebstrap
    # the test cluster's real node (tests/cluster/up.sh --real-node)
    containerd runc containernetworking-plugins iptables iproute2
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's prometheus package starts a system service on :9090; the project never uses it.
  if command -v systemctl >/dev/null 2>&1; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
  pkill -x prometheus 2>/dev/null || true
fi

if ! command -v kubectl >/dev/null 2>&1; then
  echo "setup: kubectl not found; tests/cluster builds one" >&2
fi

if [ -x tests/cluster/build.sh ] && [ "${GPUSCALE_SKIP_CLUSTER_BUILD:-0}" != 1 ]; then
  tests/cluster/build.sh core
fi
