#!/usr/bin/env bash
# Checks the built programs with readelf: a position-independent executable (ELF type DYN), every
# symbol bound at load (BIND_NOW, or NOW in FLAGS_1), a GNU_RELRO segment, stack canaries
# (__stack_chk_fail referenced) and, when $1 is 1 (an optimised build without sanitizers), at least
# one fortified libc call (a __*_chk symbol). Exit 77 (skipped) without readelf.
set -euo pipefail
expect_fortify=${1:-1}
bin="${GPUSCALE_BINARY_DIR:?}/bin"
command -v readelf >/dev/null || { echo "readelf not found" >&2; exit 77; }
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# check_program PATH: every hardening property of one ELF file.
check_program() {
  local prog=$1 name
  name=$(basename "$prog")
  if [ ! -x "$prog" ]; then
    fail "$name: not built ($prog)"
    return
  fi
  # Outputs are captured first: `readelf | grep -q` could fail on SIGPIPE under pipefail.
  local header dynamic segments symbols
  header=$(readelf -h "$prog")
  dynamic=$(readelf -d "$prog")
  segments=$(readelf -lW "$prog")
  symbols=$(readelf --dyn-syms -W "$prog")
  grep -Eq '^ +Type: +DYN ' <<<"$header" || fail "$name: not a position-independent executable"
  grep -Eq '\(BIND_NOW\)|\(FLAGS_1\).*\bNOW\b' <<<"$dynamic" ||
    fail "$name: no BIND_NOW (lazy binding leaves the GOT writable)"
  grep -q 'GNU_RELRO' <<<"$segments" || fail "$name: no GNU_RELRO segment"
  grep -q '__stack_chk_fail' <<<"$symbols" || fail "$name: no stack protector (__stack_chk_fail)"
  if [ "$expect_fortify" = 1 ]; then
    local fortified
    fortified=$(grep -Eo '__[a-z0-9_]+_chk\b' <<<"$symbols" | grep -v '^__stack_chk' || true)
    [ -n "$fortified" ] || fail "$name: no fortified libc call (__*_chk)"
  fi
}

for program in gpuscale-adapter gpuscale-reconciler gpuscale-sim; do
  check_program "$bin/$program"
done
[ "$failures" -eq 0 ] || exit 1
echo "hardening: all programs pass"
