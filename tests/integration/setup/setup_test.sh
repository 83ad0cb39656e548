#!/usr/bin/env bash
# scripts/setup.sh installing a package that starts a service (Debian's prometheus) on a machine
# where a process named prometheus already runs: with apt-get, dpkg-query and systemctl stubbed (the
# stubs record what they are asked), the package's service is kept from starting while it installs
# (policy-rc.d answers 101 during apt-get install, and is gone afterwards), its unit is disabled, and
# the running process is not stopped. Exit 77 (skipped) when not root (setup.sh installs as root).
set -uo pipefail
src=${GPUSCALE_SOURCE_DIR:?}
[ "$(id -u)" = 0 ] || { echo "skip: not root"; exit 77; }
work=$(mktemp -d)
user_pid=""
cleanup() {
  [ -z "$user_pid" ] || kill "$user_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}

mkdir -p "$work/bin"
# Every package installed except prometheus.
cat >"$work/bin/dpkg-query" <<'STUB'
#!/bin/sh
for last; do :; done
[ "$last" = prometheus ] && exit 1
echo "install ok installed"
STUB
# apt-get records its arguments and what policy-rc.d answers while it installs.
cat >"$work/bin/apt-get" <<STUB
#!/bin/sh
echo "apt-get \$*" >>"$work/calls"
if [ "\$1" = install ]; then
  "$work/policy-rc.d" prometheus start
  echo "policy-rc.d during install: \$?" >>"$work/calls"
fi
STUB
cat >"$work/bin/systemctl" <<STUB
#!/bin/sh
echo "systemctl \$*" >>"$work/calls"
STUB
chmod +x "$work/bin"/*
# The user's own process called prometheus.
cp "$(command -v sleep)" "$work/prometheus"
"$work/prometheus" 300 &
user_pid=$!

PATH=$work/bin:$PATH GPUSCALE_POLICY_RC_D=$work/policy-rc.d GPUSCALE_SKIP_CLUSTER_BUILD=1 \
  "$src/scripts/setup.sh" >"$work/out" 2>&1
status=$?
cat "$work/out" "$work/calls" 2>/dev/null | sed 's/^/     /'
check "setup.sh succeeded" '[ $status = 0 ]'
check "apt-get installed prometheus" 'grep -q "^apt-get install .*prometheus" "$work/calls"'
check "services were kept from starting during the install (policy-rc.d: 101)" \
  'grep -q "^policy-rc.d during install: 101$" "$work/calls"'
check "the policy-rc.d it wrote is gone" '[ ! -e "$work/policy-rc.d" ]'
check "the prometheus unit is disabled, nothing stopped" \
  '[ "$(grep "^systemctl" "$work/calls")" = "systemctl disable prometheus" ]'
check "the user's prometheus process still runs" 'kill -0 "$user_pid" 2>/dev/null'
# A policy-rc.d of the machine's own is left as it is.
printf '#!/bin/sh\nexit 0\n' >"$work/policy-rc.d"
chmod +x "$work/policy-rc.d"
: >"$work/calls"
PATH=$work/bin:$PATH GPUSCALE_POLICY_RC_D=$work/policy-rc.d GPUSCALE_SKIP_CLUSTER_BUILD=1 \
  "$src/scripts/setup.sh" >/dev/null 2>&1
check "a policy-rc.d of the machine's own stays" 'grep -q "exit 0" "$work/policy-rc.d"'

if [ $failures -gt 0 ]; then
  echo "$failures setup check(s) failed"
  exit 1
fi
echo "setup checks passed"
