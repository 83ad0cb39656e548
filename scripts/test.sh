#!/usr/bin/env bash
# The test command: installs what is needed, builds with warnings as errors, runs the integration and
# end-to-end tests with ctest, then the unit tests and a short soak of the adapter under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the fuzzers briefly. The unit tests are built
# only in the sanitizer pass (building them twice was a tenth of a cold run).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GPUSCALE_JOBS:-$(nproc)}

scripts/setup.sh

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
  -DGPUSCALE_UNIT_TESTS=OFF >/dev/null
cmake --build build -j "$jobs"

echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== unit tests and a short adapter soak under ASan+UBSan"
cmake -S . -B build-asan -G Ninja "${launcher[@]}" -DGPUSCALE_WERROR=ON -DGPUSCALE_SANITIZE=ON -DGPUSCALE_UNIT_ONLY=ON \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS="print_stacktrace=1:suppressions=$PWD/tests/ubsan.supp" \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -L 'unit|soak'

echo "== fuzzers (short run)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja "${launcher[@]}" -DGPUSCALE_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
if cmake --build build-fuzz --target help | grep -q '^fuzzers:'; then
  cmake --build build-fuzz -j "$jobs" --target fuzzers
fi
if [ -d build-fuzz/fuzz ]; then
  ctest --test-dir build-fuzz --output-on-failure -L fuzz
fi
echo "== all tests passed"
