#!/usr/bin/env bash
# scripts/release.sh from this build's programs (--prebuilt) into $GPUSCALE_BINARY_DIR/release, then:
#   - the folder, offline (check_release.py): exactly the promised files, SHA256SUMS, the images' OCI
#     archives named and labelled with VERSION and the git commit, the chart package, the tarball's
#     layout and bundled libraries (NOTICE names each one's package), the SBOM against all of them;
#   - the chart package lints (--strict) and renders the release's image tags;
#   - the tarball's programs in a bare Debian 12 root file system (the minbase that the images are
#     built on, which has none of the build's libraries: checked), run as a container runtime would
#     (own mount and PID namespaces, /proc, chroot, an unprivileged user): --version, `rules check`,
#     `plan --from` and `explain --from` on the seed dump, and `gpuscale-adapter explain` against a
#     real Prometheus scraping Triton-like series.
# The folder stays: tests/e2e/install installs from it (ctest fixture release_artifacts); the images'
# tags in buildah's storage are removed (their layers stay cached). Exit 77 (skipped) without root,
# buildah, helm or the programs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
build=${GPUSCALE_BINARY_DIR:-$src/build}
helm=${GPUSCALE_HELM:-$src/tests/cluster/bin/helm}
skip() {
  echo "skip: $1"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "not root (buildah's storage, chroot)"
command -v buildah >/dev/null 2>&1 || skip "buildah not installed"
[ -x "$helm" ] || skip "helm not built ($helm; tests/cluster/build.sh core builds it)"
for program in adapter reconciler sim; do
  [ -x "$build/bin/gpuscale-$program" ] || skip "gpuscale-$program not built in $build"
done
version=$(cat "$src/VERSION")
out=$build/release
work=$(mktemp -d)
exporter_pid=""
cleanup() {
  [ -z "$exporter_pid" ] || kill "$exporter_pid" 2>/dev/null || true
  "$src/tests/support/prometheus_run.sh" stop "$work/prometheus" >/dev/null 2>&1 || true
  for program in adapter reconciler sim; do
    buildah rmi "localhost/gpuscale-$program:$version" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}

started=$SECONDS
# The helm the tests built, ahead of any on PATH.
PATH=$(dirname "$helm"):$PATH "$src/scripts/release.sh" "$version" --prebuilt "$build" --out "$out" \
  >"$work/release.log" 2>&1 || { cat "$work/release.log"; echo "FAIL scripts/release.sh"; exit 1; }
echo "ok   scripts/release.sh $version in $((SECONDS - started)) s"
sed -n '/^release: \//,$p' "$work/release.log"

revision=$(git -C "$src" rev-parse HEAD)
check "the folder: files, checksums, images, chart, tarball, SBOM" \
  'python3 "$here/check_release.py" "$out" "$version" "$revision" "$src/NOTICE"'
export HELM_CACHE_HOME=$work/helm HELM_CONFIG_HOME=$work/helm HELM_DATA_HOME=$work/helm
check "the packaged chart passes helm lint --strict" \
  '"$helm" lint --strict "$out/gpuscale-$version.tgz" >"$work/lint" 2>&1 || { cat "$work/lint"; false; }'
check "the packaged chart's images default to the release's tag" \
  '[ "$("$helm" template gpuscale "$out/gpuscale-$version.tgz" |
        grep -c "image: gpuscale-\(adapter\|reconciler\):$version$")" = 2 ]'

# A bare Debian 12: the minbase root file system scripts/build-images.sh made for the images' base
# (cached; made here if it is not).
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gpuscale/images
base=$(ls -t "$cache"/debian-bookworm-slim-*.tar 2>/dev/null | grep -v partial | head -n 1 || true)
[ -n "$base" ] || skip "no cached Debian root file system in $cache (scripts/build-images.sh makes it)"
root=$work/root
mkdir -p "$root"
tar -C "$root" -xf "$base"
present=$(find "$root/usr/lib" "$root/lib" -name 'libcpprest*' -o -name 'libboost*' -o -name 'libyaml-cpp*' \
  -o -name 'libspdlog*' -o -name 'libfmt*' -o -name 'libre2*' -o -name 'libprometheus-cpp*' \
  -o -name 'libssl.so*' 2>/dev/null | sed "s|^$root||" || true)
check "the root file system has none of the build's libraries${present:+ (has: $present)}" '[ -z "$present" ]'
name=gpuscale-$version-linux-amd64
tar -C "$root/opt" -xzf "$out/$name.tar.gz"
install -D -m 0644 "$src/tests/data/partition/a100_1g_stuck.json" "$root/data/dump.json"
# Runs a program of the tarball in the root file system as an unprivileged user, in its own mount and
# PID namespaces with /proc mounted (glibc finds $ORIGIN, and so the RPATH, through /proc/self/exe).
bare() {
  local program=$1
  shift
  unshare --mount --pid --fork --mount-proc="$root/proc" \
    chroot --userspec=65532:65532 "$root" "/opt/$name/bin/$program" "$@"
}
chroot "$root" ldd "/opt/$name/bin/gpuscale-adapter" "/opt/$name/bin/gpuscale-reconciler" \
  >"$work/ldd.out" 2>&1 || true
check "ldd finds every library of both programs there" \
  '[ -s "$work/ldd.out" ] && ! grep -q "not found" "$work/ldd.out" || { cat "$work/ldd.out"; false; }'
check "both programs load every library but the C library's from the tarball's lib/" \
  '[ "$(grep -c "=> /opt/$name/bin/../lib/" "$work/ldd.out")" -ge 20 ] &&
     [ -z "$(grep "=> /" "$work/ldd.out" | grep -v "/opt/$name/bin/../lib/" |
             grep -v "/libc.so\|/libm.so\|/libpthread.so\|/ld-linux")" ]'
for program in adapter reconciler; do
  check "gpuscale-$program --version" '[ "$(bare gpuscale-$program --version)" = "gpuscale-$program $version" ]'
done
check "gpuscale-adapter rules check rules/triton.yaml" \
  'bare gpuscale-adapter rules check "/opt/$name/rules/triton.yaml" >"$work/check.out" 2>&1 ||
     { cat "$work/check.out"; false; }'
check "gpuscale-adapter rules check refuses a broken file" \
  'printf "rules:\n- seriesQuery: 1\n  bogus: x\n" >"$root/data/bad.yaml" &&
     ! bare gpuscale-adapter rules check /data/bad.yaml >/dev/null 2>&1'
check "gpuscale-reconciler plan --from the seed dump" \
  'bare gpuscale-reconciler plan --from /data/dump.json >"$work/plan.out" 2>&1 &&
     grep -q "maxReplicas\|MaxReplicas" "$work/plan.out" || { cat "$work/plan.out"; false; }'
check "gpuscale-reconciler explain --from the seed dump" \
  'bare gpuscale-reconciler explain default/triton --from /data/dump.json >"$work/explain.out" 2>&1 &&
     grep -q "^HPA default/triton" "$work/explain.out" || { cat "$work/explain.out"; false; }'

# gpuscale-adapter explain over HTTP: the chroot shares the network, so it reaches a Prometheus on
# loopback that scrapes gpuscale-sim's Triton-like exporter.
"$build/bin/gpuscale-sim" exporter --listen 127.0.0.1:0 --port-file "$work/exporter.port" \
  >"$work/exporter.log" 2>&1 &
exporter_pid=$!
for _ in $(seq 100); do [ -s "$work/exporter.port" ] && break; sleep 0.1; done
url=$("$src/tests/support/prometheus_run.sh" start "$work/prometheus" \
  --scrape "127.0.0.1:$(cat "$work/exporter.port")" --interval 1s)
scraped() { [[ $(curl -sf "$url/api/v1/query?query=nv_inference_queue_duration_us") == *'"pod"'* ]]; }
for _ in $(seq 60); do scraped && break; sleep 0.5; done
check "gpuscale-adapter explain against Prometheus serves avg_time_queue_us" \
  'bare gpuscale-adapter explain --config "/opt/$name/rules/triton.yaml" --prometheus-url "$url" \
     --metric avg_time_queue_us >"$work/adapter-explain.out" 2>&1 &&
     grep -q "verdict: *serves .*pods/avg_time_queue_us" "$work/adapter-explain.out" ||
     { cat "$work/adapter-explain.out"; false; }'

if [ $failures -gt 0 ]; then
  echo "$failures release check(s) failed"
  exit 1
fi
echo "release checks passed ($((SECONDS - started)) s)"
