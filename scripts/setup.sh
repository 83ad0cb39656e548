#!/usr/bin/env bash
# Installs what building, testing and the demo need on a fresh Debian 12 machine, and checks what it
# cannot install. Idempotent; apt-get as root. It stops no process and changes no service that was
# there before it ran.
#
# - Debian packages: installed when missing. Services a new package would start at install (Debian's
#   prometheus starts one on :9090) are kept from starting, and the prometheus unit installed here is
#   disabled: the tests start their own servers on free ports.
# - Go: the test control plane (tests/cluster) is built from Go modules and needs a newer Go than
#   Debian 12 ships; tests/cluster/lib/go-toolchain.sh checks it and says what to install.
# - The test control plane's core group (kubectl, Helm, ...) is then built (cached). The extra group
#   (Thanos, KEDA: only the tests labelled go-extra use it) is left to scripts/test.sh or
#   `tests/cluster/build.sh extra`.
#
# Environment: GPUSCALE_SETUP=build (the image build stage) installs only what building the programs
# needs; GPUSCALE_SKIP_CLUSTER_BUILD=1 skips the Go check and the cluster build;
# GPUSCALE_POLICY_RC_D names the policy-rc.d file (tests/integration/setup).
set -euo pipefail
cd "$(dirname "$0")/.."

# What building the programs needs (GPUSCALE_SETUP=build: the image build stage stops here).
packages=(
  build-essential cmake ninja-build pkg-config ca-certificates
  libboost-dev libboost-system-dev libssl-dev libcpprest-dev prometheus-cpp-dev nlohmann-json3-dev
  libyaml-cpp-dev libfmt-dev libspdlog-dev libre2-dev libgtest-dev libgmock-dev
)
# What the tests, benchmarks, sanitizer and fuzz passes, the demo, the image builds and releases need.
if [ "${GPUSCALE_SETUP:-all}" != build ]; then
  packages+=(
    ccache git curl openssl libbenchmark-dev clang clang-format libclang-rt-14-dev
    prometheus hey wrk python3 python3-yaml python3-kubernetes python3-botocore buildah mmdebstrap
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
  # invoke-rc.d asks policy-rc.d whether a package may start its service; 101 = no. Only while these
  # packages install, and only if the machine has no policy of its own.
  policy=${GPUSCALE_POLICY_RC_D:-/usr/sbin/policy-rc.d}
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    own_policy=1
    trap '[ "$own_policy" = 0 ] || rm -f "$policy"' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "$own_policy" = 1 ]; then
    rm -f "$policy"
    own_policy=0
  fi
  # The prometheus unit installed just now stays off at boot too (never started, so nothing to stop).
  if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null 2>&1; then
    systemctl disable prometheus >/dev/null 2>&1 || true
  fi
fi

if [ "${GPUSCALE_SETUP:-all}" = build ] || [ "${GPUSCALE_SKIP_CLUSTER_BUILD:-0}" = 1 ] ||
  [ ! -x tests/cluster/build.sh ]; then
  exit 0
fi
go=$(tests/cluster/lib/go-toolchain.sh) || exit 1
echo "setup: Go $(GOTOOLCHAIN=local "$go" version | cut -d' ' -f3) at $go"
GO=$go tests/cluster/build.sh core
