#!/usr/bin/env bash
# The references in docs/generated/ are exactly what the code prints, so they cannot drift from it:
# flags-PROGRAM.md is `PROGRAM flags --markdown` for each program (and every command's --help lists
# each flag the reference lists for it), policy.md is `gpuscale-reconciler policy reference`.
set -uo pipefail
bin="${GPUSCALE_BINARY_DIR:?}/bin"
src="${GPUSCALE_SOURCE_DIR:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

for program in gpuscale-adapter gpuscale-reconciler gpuscale-sim; do
  [ -x "$bin/$program" ] || { echo "skip: $bin/$program not built"; exit 77; }
  "$bin/$program" flags --markdown >"$work/$program.md" || fail "$program flags --markdown: exit $?"
  if diff -u "$src/docs/generated/flags-$program.md" "$work/$program.md" >"$work/$program.diff"; then
    echo "ok   docs/generated/flags-$program.md"
  else
    cat "$work/$program.diff"
    fail "docs/generated/flags-$program.md differs from the declarations; regenerate it with scripts/reference-docs.sh"
  fi
  # Each command section of the reference: its flags appear in the command's --help.
  for command in $(sed -n 's/^## `'"$program"' \(.*\)`$/\1/p' "$work/$program.md" | tr ' ' '+'); do
    words=${command//+/ }
    # shellcheck disable=SC2086
    "$bin/$program" $words --help >"$work/help" 2>&1 || fail "$program $words --help: exit $?"
    awk -v heading="## \`$program $words\`" '$0 == heading {on = 1; next} /^## / {on = 0} on' \
      "$work/$program.md" | awk -F'|' '/^\| `-/ {print $2}' | grep -o -- '--[a-z0-9-]*' |
      sort -u >"$work/flags"
    [ -s "$work/flags" ] || fail "$program $words: no flags found in the reference"
    while read -r flag; do
      grep -qF -- "$flag" "$work/help" || fail "$program $words --help lacks $flag"
    done <"$work/flags"
    echo "ok   $program $words --help lists its $(wc -l <"$work/flags") flags"
  done
done

"$bin/gpuscale-reconciler" policy reference >"$work/policy.md" ||
  fail "gpuscale-reconciler policy reference: exit $?"
if diff -u "$src/docs/generated/policy.md" "$work/policy.md"; then
  echo "ok   docs/generated/policy.md"
else
  fail "docs/generated/policy.md differs from the parser's declarations; regenerate it with scripts/reference-docs.sh"
fi

[ "$failures" -eq 0 ] || exit 1
echo "references: all checks passed"
