#!/usr/bin/env bash
# Regenerates the references in docs/generated/ from the code: flags-PROGRAM.md from each
# program's flag declarations (`PROGRAM flags --markdown`) and policy.md from the policy parser's
# key declarations (`gpuscale-reconciler policy reference`); tests/integration/reference checks
# that they are up to date.
# Usage: scripts/reference-docs.sh [BUILD_DIR]   (default: build; the programs must be built)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
mkdir -p "$src/docs/generated"
for program in gpuscale-adapter gpuscale-reconciler gpuscale-sim; do
  "$build/bin/$program" flags --markdown >"$src/docs/generated/flags-$program.md"
  echo "docs/generated/flags-$program.md"
done
"$build/bin/gpuscale-reconciler" policy reference >"$src/docs/generated/policy.md"
echo "docs/generated/policy.md"
