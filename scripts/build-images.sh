#!/usr/bin/env bash
# Builds the container images of gpuscale-adapter, gpuscale-reconciler and gpuscale-sim from the
# Dockerfile (one target each), with buildah, podman or docker, whichever is found first.
#
#   scripts/build-images.sh [--prebuilt BUILD_DIR] [--tag TAG] [--programs "adapter reconciler sim"]
#                           [--save DIR [--format docker-archive|oci-archive]]
#
# --prebuilt BUILD_DIR  take the programs from BUILD_DIR/bin (built on Debian bookworm, as
#                       scripts/test.sh does) instead of compiling them in the image build; the
#                       runtime stage is the same. This is what the tests use.
# --tag TAG             image tag (default dev): localhost/gpuscale-<program>:TAG under buildah and
#                       podman, gpuscale-<program>:TAG under docker.
# --save DIR            also write each image as a docker-archive DIR/gpuscale-<program>.tar (what
#                       `ctr images import` and `podman load` take), or with --format oci-archive as
#                       an OCI archive DIR/gpuscale-<program>.oci.tar (what scripts/release.sh ships;
#                       `ctr images import`, `podman load` and `skopeo copy oci-archive:...` take it).
#
# The images' org.opencontainers.image.version label is the VERSION file's (the one version
# source), .revision the git commit.
#
# Without a reachable registry, buildah and podman find no Debian base image; the script then makes
# debian:bookworm-slim (and debian:bookworm for a build from source) from Debian packages with
# mmdebstrap and registers them under those names. The root file systems are cached in
# ${XDG_CACHE_HOME:-~/.cache}/gpuscale/images, keyed by what makes them; delete that folder to
# refresh them. Prints each image's size and build time.
set -euo pipefail
cd "$(dirname "$0")/.."

prebuilt="" tag=dev programs="adapter reconciler sim" save="" format=docker-archive
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) prebuilt=$(cd "$2" && pwd); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --save) save=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    *)
      echo "usage: $0 [--prebuilt BUILD_DIR] [--tag TAG] [--programs LIST] [--save DIR" \
        "[--format docker-archive|oci-archive]]" >&2
      exit 2 ;;
  esac
done
case "$format" in
  docker-archive) suffix_save=.tar ;;
  oci-archive) suffix_save=.oci.tar ;;
  *) echo "build-images: --format must be docker-archive or oci-archive" >&2; exit 2 ;;
esac

engine=""
for candidate in buildah podman docker; do
  if command -v "$candidate" >/dev/null 2>&1; then engine=$candidate; break; fi
done
if [ -z "$engine" ]; then
  echo "build-images: no buildah, podman or docker found" >&2
  exit 1
fi

image_exists() {
  case "$engine" in
    buildah) buildah inspect --type image "$1" >/dev/null 2>&1 ;;
    *) "$engine" image inspect "$1" >/dev/null 2>&1 ;;
  esac
}

# debian:<suite-tag> from Debian packages: a minbase bookworm; the slim one without documentation,
# manual pages and translations, as Debian's own slim images.
make_base_image() {
  local name=$1 slim=$2
  # Merged /usr set up by mmdebstrap's hook (usr-is-merged), not by the usrmerge package and the
  # Perl it pulls in.
  local options=(--variant=minbase --mode=root --aptopt='Acquire::Retries "3"'
                 --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr)
  if [ "$slim" = 1 ]; then
    options+=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
              --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*'
              --dpkgopt='path-exclude=/usr/share/info/*')
  fi
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/gpuscale/images
  local key
  key=$(printf '%s\n' bookworm "${options[@]}" | sha256sum | cut -c1-16)
  local rootfs=$cache/$(basename "$name" | tr ':' '-')-$key.tar
  mkdir -p "$cache"
  if [ ! -s "$rootfs" ]; then
    if ! command -v mmdebstrap >/dev/null 2>&1; then
      echo "build-images: $name is not present and mmdebstrap is not installed to make it" >&2
      exit 1
    fi
    echo "build-images: making $name from Debian packages (mmdebstrap)"
    # The output format follows the file name: keep .tar at the end of the partial file.
    if ! mmdebstrap --quiet "${options[@]}" bookworm "${rootfs%.tar}.partial.tar" \
      >"$cache/mmdebstrap.log" 2>&1; then
      cat "$cache/mmdebstrap.log" >&2
      exit 1
    fi
    mv "${rootfs%.tar}.partial.tar" "$rootfs"
  fi
  echo "build-images: registering $name from $rootfs"
  case "$engine" in
    buildah)
      local container
      container=$(buildah from scratch)
      buildah add --quiet "$container" "$rootfs" / >/dev/null
      buildah config --cmd /bin/bash "$container"
      buildah commit --quiet "$container" "$name" >/dev/null
      buildah rm "$container" >/dev/null
      ;;
    *) "$engine" import --change 'CMD ["/bin/bash"]' "$rootfs" "$name" >/dev/null ;;
  esac
}

if [ "$engine" != docker ]; then
  image_exists docker.io/library/debian:bookworm-slim ||
    make_base_image docker.io/library/debian:bookworm-slim 1
  if [ -z "$prebuilt" ]; then
    image_exists docker.io/library/debian:bookworm || make_base_image docker.io/library/debian:bookworm 0
  fi
fi

context=.
suffix=""
if [ -n "$prebuilt" ]; then
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  cp Dockerfile "$context/"
  for program in $programs; do
    binary=$prebuilt/bin/gpuscale-$program
    if [ ! -x "$binary" ]; then
      echo "build-images: $binary not built" >&2
      exit 1
    fi
    install -D -m 0755 "$binary" "$context/prebuilt/$program/usr/local/bin/gpuscale-$program"
    strip "$context/prebuilt/$program/usr/local/bin/gpuscale-$program"
  done
  install -D -m 0644 rules/triton.yaml "$context/prebuilt/adapter/etc/adapter/config.yaml"
  suffix=-prebuilt
fi

version=$(cat VERSION)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
source_url=$(git remote get-url origin 2>/dev/null || echo unknown)
build_args=(--build-arg "VERSION=$version" --build-arg "REVISION=$revision"
            --build-arg "SOURCE=$source_url")
prefix=""
[ "$engine" = docker ] || prefix=localhost/
[ -z "$save" ] || mkdir -p "$save"

for program in $programs; do
  image=${prefix}gpuscale-$program:$tag
  started=$(date +%s)
  case "$engine" in
    buildah)
      buildah bud --quiet --pull=never --isolation=chroot --layers "${build_args[@]}" \
        --target "$program$suffix" -t "$image" -f "$context/Dockerfile" "$context" >/dev/null ;;
    podman)
      podman build --quiet --pull=never --isolation=chroot --layers "${build_args[@]}" \
        --target "$program$suffix" -t "$image" -f "$context/Dockerfile" "$context" >/dev/null ;;
    docker)
      docker build --quiet "${build_args[@]}" --target "$program$suffix" -t "$image" \
        -f "$context/Dockerfile" "$context" >/dev/null ;;
  esac
  seconds=$(($(date +%s) - started))
  case "$engine" in
    buildah) size=$(buildah images --format '{{.Size}}' "$image" | sed -n 1p) ;;
    *) size=$("$engine" image inspect --format '{{.Size}}' "$image") ;;
  esac
  echo "build-images: $image built in ${seconds}s, size $size"
  if [ -n "$save" ]; then
    archive=$save/gpuscale-$program$suffix_save
    rm -f "$archive"
    # The archive names the image (the OCI one in org.opencontainers.image.ref.name), so
    # `ctr images import` and `podman load` register it under that name.
    case "$engine" in
      buildah) buildah push --quiet "$image" "$format:$archive:$image" ;;
      podman) podman save --format "$format" -o "$archive" "$image" ;;
      docker)
        [ "$format" = docker-archive ] || { echo "build-images: docker saves docker-archives only" >&2; exit 1; }
        docker save -o "$archive" "$image" ;;
    esac
  fi
done
