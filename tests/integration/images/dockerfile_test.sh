#!/usr/bin/env bash
# Checks the Dockerfile offline against the repository and this build tree (check_dockerfile.py).
# images_test.sh builds and runs the images. Exit 77 (skipped) when
# gpuscale-adapter has not been built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
build=${GPUSCALE_BINARY_DIR:-$src/build}
if [ ! -x "$build/bin/gpuscale-adapter" ]; then
  echo "gpuscale-adapter not built in $build: skipped"
  exit 77
fi
python3 "$here/check_dockerfile.py" "$src" "$build"
