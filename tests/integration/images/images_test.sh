#!/usr/bin/env bash
# Builds the three images with scripts/build-images.sh from this build's programs (--prebuilt) and
# checks them for real: each runs as its numeric non-root user, carries the OCI labels, finds every
# shared library it needs (ldd inside the image, and the program's --help), and the adapter image
# serves /healthz as that user with a read-only view of its own files. Exit 77 (skipped) without
# buildah, without root, or when the programs are not built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${GPUSCALE_SOURCE_DIR:-$(cd "$here/../../.." && pwd)}
build=${GPUSCALE_BINARY_DIR:-$src/build}
skip() {
  echo "$1: skipped"
  exit 77
}
command -v buildah >/dev/null 2>&1 || skip "buildah not installed"
[ "$(id -u)" = 0 ] || skip "not root (buildah's storage and chroot isolation need it here)"
for program in adapter reconciler sim; do
  [ -x "$build/bin/gpuscale-$program" ] || skip "gpuscale-$program not built in $build"
done

tag=test-$$
containers=()
adapter_pid=""
cleanup() {
  [ -z "$adapter_pid" ] || kill "$adapter_pid" 2>/dev/null || true
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  for program in adapter reconciler sim; do
    buildah rmi "localhost/gpuscale-$program:$tag" >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT

"$src/scripts/build-images.sh" --prebuilt "$build" --tag "$tag"

failures=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}

for program in adapter reconciler sim; do
  image=localhost/gpuscale-$program:$tag
  config=$(buildah inspect --type image "$image" |
    python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["OCIv1"]["config"]))')
  field() { python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1]).get(sys.argv[2])))' "$config" "$1"; }
  user=$(field User | tr -d '"')
  entrypoint=$(field Entrypoint)
  labels=$(field Labels)
  check "$program runs as 65532:65532 (got $user)" '[ "$user" = 65532:65532 ]'
  check "$program entrypoint is its binary ($entrypoint)" \
    '[ "$entrypoint" = "[\"/usr/local/bin/gpuscale-$program\"]" ]'
  for label in title version source licenses; do
    check "$program has org.opencontainers.image.$label" \
      'grep -q "\"org.opencontainers.image.$label\": \"[^\"]" <<<"$labels"'
  done
  container=$(buildah from --pull-never "$image")
  containers+=("$container")
  missing=$(buildah run --isolation=chroot "$container" -- ldd "/usr/local/bin/gpuscale-$program" |
    grep "not found" || true)
  check "$program finds every shared library${missing:+ (missing: $missing)}" '[ -z "$missing" ]'
  check "$program --help runs as the image user" \
    'buildah run --isolation=chroot --user 65532:65532 "$container" -- \
       "/usr/local/bin/gpuscale-$program" --help >/dev/null 2>&1'
  check "$program cannot overwrite its own binary" \
    '! buildah run --isolation=chroot --user 65532:65532 "$container" -- \
       sh -c "echo x >> /usr/local/bin/gpuscale-$program" 2>/dev/null'
  size=$(buildah images --format '{{.Size}}' "$image" | sed -n 1p)
  echo "     $image: $size"
done

# The adapter image serves: standalone, its default rules, a certificate written to a temporary
# folder (the Deployment mounts an emptyDir for it), on a free loopback port (chroot isolation shares
# the host's network).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container=$(buildah from --pull-never "localhost/gpuscale-adapter:$tag")
containers+=("$container")
log=$(mktemp)
buildah run --isolation=chroot --user 65532:65532 "$container" -- /usr/local/bin/gpuscale-adapter \
  --standalone --bind-address=127.0.0.1 --secure-port="$port" --cert-dir=/tmp/serving-cert \
  --config=/etc/adapter/config.yaml --prometheus-url=http://127.0.0.1:1 >"$log" 2>&1 &
adapter_pid=$!
served=0
for _ in $(seq 1 100); do
  if [ "$(curl -sk -m 2 "https://127.0.0.1:$port/healthz" || true)" = ok ]; then
    served=1
    break
  fi
  sleep 0.2
done
check "the adapter image serves /healthz as its user" '[ $served = 1 ]'
[ $served = 1 ] || cat "$log"
kill "$adapter_pid" 2>/dev/null || true
wait "$adapter_pid" 2>/dev/null || true
adapter_pid=""
rm -f "$log"

if [ $failures -gt 0 ]; then
  echo "$failures image check(s) failed"
  exit 1
fi
echo "image checks passed"
