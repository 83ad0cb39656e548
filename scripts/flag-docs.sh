#!/usr/bin/env bash
# Regenerates docs/flags/PROGRAM.md from the programs' flag declarations (`PROGRAM flags
# --markdown`); tests/integration/flags checks that they are up to date.
# Usage: scripts/flag-docs.sh [BUILD_DIR]   (default: build; the programs must be built)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
mkdir -p "$src/docs/flags"
for program in gpuscale-adapter gpuscale-reconciler gpuscale-sim; do
  "$build/bin/$program" flags --markdown >"$src/docs/flags/$program.md"
  echo "docs/flags/$program.md"
done
