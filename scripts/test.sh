#!/usr/bin/env bash
# The test command: installs what is needed, builds with warnings as errors, runs the integration and
# end-to-end tests with ctest, then the unit tests and a short soak of the adapter under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the fuzzers briefly.
#
# Two build trees: the release tree (gcc, RelWithDebInfo) for ctest, and one clang tree for the
# sanitizer pass and the fuzzers (the libraries are instrumented the same way for both). The unit
# tests are built only in the clang tree. To fit a cold run on two cores, the work overlaps: the test
# control plane builds from Go modules while the Debian packages install and the release tree compiles;
# the clang tree and the Go parts only a few tests need (ctest label go-extra, run last) compile at a
# low priority while ctest runs (the end-to-end tests wait on their clusters and leave CPU idle).
# Line tables (-g1) are enough for sanitizer and crash stack traces and make the builds cheaper.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GPUSCALE_JOBS:-$(nproc)}

background=()
trap 'for p in "${background[@]}"; do kill -- "$p" 2>/dev/null || true; done' EXIT

build_cluster=1
[ "${GPUSCALE_SKIP_CLUSTER_BUILD:-0}" = 1 ] && build_cluster=0
[ -x tests/cluster/build.sh ] || build_cluster=0

# The Go parts need only the Go toolchain, so they start before the Debian packages are installed.
mkdir -p build
cluster_log=build/cluster-build.log
if [ "$build_cluster" = 1 ]; then
  echo "== test control plane from Go modules (in the background, log in $cluster_log)"
  tests/cluster/build.sh core >"$cluster_log" 2>&1 &
  cluster_pid=$!
  background+=("$cluster_pid")
fi

GPUSCALE_SKIP_CLUSTER_BUILD=1 scripts/setup.sh

# The three build trees take about 10 GiB; say so up front rather than fail in a linker.
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ "${free_kib:-0}" -lt $((12 * 1024 * 1024)) ]; then
  echo "warning: $((free_kib / 1024 / 1024)) GiB free here; the builds and tests need about 12 GiB" >&2
fi

# ccache makes the repeated builds of a CI machine cheap; a cold machine just builds.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Share hits between checkouts in different folders (a fresh clone, CI).
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi

echo "== build (warnings as errors)"
cmake -S . -B build -G Ninja "${launcher[@]}" -DGPUSCALE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DGPUSCALE_UNIT_TESTS=OFF >/dev/null
cmake --build build -j "$jobs"

# Waits for a background Go build (PID, LOG, WHAT); on failure shows the log's end and stops.
wait_for_build() {
  [ -n "$1" ] || return 0
  if ! wait "$1"; then
    tail -n 40 "$2" >&2
    echo "$3 build failed (whole log: $2)" >&2
    exit 1
  fi
  tail -n 2 "$2"
}
wait_for_build "${cluster_pid:-}" "$cluster_log" "test control plane"

# The sanitizer and fuzz tree: configured now, compiled at the lowest priority while ctest runs.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja "${launcher[@]}" -DGPUSCALE_WERROR=ON \
  -DGPUSCALE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null
nice -n 19 cmake --build build-asan -j "$jobs" >build-asan/background-build.log 2>&1 &
asan_pid=$!
background+=("$asan_pid")

# The Go parts only a few tests need (label go-extra). build.sh compiles at nice 10, so these come
# before the clang tree (nice 19) and are ready by the time the other tests end; the tests (nice 0)
# come first.
extra_log=build/cluster-build-extra.log
if [ "$build_cluster" = 1 ]; then
  tests/cluster/build.sh extra >"$extra_log" 2>&1 &
  extra_pid=$!
  background+=("$extra_pid")
fi

echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs" -LE go-extra
wait_for_build "${extra_pid:-}" "$extra_log" "test backends"
ctest --test-dir build --output-on-failure -j "$jobs" -L go-extra

echo "== unit tests and a short adapter soak under ASan+UBSan"
wait "$asan_pid" || true
# A no-op when the background build succeeded; otherwise this shows its errors.
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:suppressions=$PWD/tests/ubsan.supp" \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -L 'unit|soak'

echo "== fuzzers (short run)"
ctest --test-dir build-asan --output-on-failure -j "$jobs" -L fuzz
echo "== all tests passed"
