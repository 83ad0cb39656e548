#!/usr/bin/env bash
# Builds a release of gpuscale into one folder:
#
#   gpuscale-adapter-VERSION.oci.tar      the three images as OCI archives (scripts/build-images.sh),
#   gpuscale-reconciler-VERSION.oci.tar   each named localhost/gpuscale-<program>:VERSION inside
#   gpuscale-sim-VERSION.oci.tar
#   gpuscale-VERSION.tgz                  the Helm chart, packaged (helm package)
#   gpuscale-VERSION-linux-amd64.tar.gz   gpuscale-adapter and gpuscale-reconciler for Linux x86-64
#                                         with every shared library they need but the C library's
#                                         own (lib/, found through the programs' RPATH
#                                         $ORIGIN/../lib), the rule files, LICENSE, NOTICE and the
#                                         bundled packages' copyright files: `rules check`,
#                                         `explain` and `plan --from` without a build
#   gpuscale-VERSION.spdx.json            SBOM (SPDX 2.3): what the images and the tarball contain
#   SHA256SUMS                            sha256sum -c SHA256SUMS checks the files above
#
#   scripts/release.sh VERSION [--out DIR] [--prebuilt BUILD_DIR]
#
# VERSION must be the VERSION file's (the one version source: the programs' --version, the images'
# labels and the chart's version and appVersion carry it); to release another version, change the
# file, the chart's version/appVersion and CHANGELOG.md first. --out: the folder (default
# dist/VERSION; a previous release there is replaced, any other content refused). --prebuilt: take
# the programs from BUILD_DIR/bin, built on
# Debian bookworm (what the tests do) instead of a Release build in build-release/.
#
# Needs buildah (as root: it builds the images and the SBOM reads the packages inside them), helm (on
# PATH or tests/cluster/bin/helm, which tests/cluster/build.sh builds), and dpkg (the SBOM names the
# Debian packages the libraries come from). Prints the folder's files with their sizes.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 VERSION [--out DIR] [--prebuilt BUILD_DIR]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
version=$1
shift
out="" prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --prebuilt) prebuilt=$(cd "$2" && pwd); shift 2 ;;
    *) usage ;;
  esac
done
die() {
  echo "release: $*" >&2
  exit 1
}

[ "$version" = "$(cat VERSION)" ] ||
  die "VERSION holds $(cat VERSION), not $version: change VERSION (and the chart, CHANGELOG.md) first"
for field in version appVersion; do
  chart_value=$(sed -n "s/^$field: *\"\\{0,1\\}\\([^\"]*\\)\"\\{0,1\\}$/\\1/p" charts/gpuscale/Chart.yaml)
  [ "$chart_value" = "$version" ] || die "charts/gpuscale/Chart.yaml $field is $chart_value, not $version"
done
grep -q "^## \[$version\]" CHANGELOG.md || die "CHANGELOG.md has no section [$version]"
helm=$(command -v helm || echo tests/cluster/bin/helm)
[ -x "$helm" ] || die "helm not found (tests/cluster/build.sh core builds one into tests/cluster/bin)"
command -v buildah >/dev/null 2>&1 || die "buildah not found (scripts/setup.sh installs it)"
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "release: warning: the working tree has uncommitted changes; revision $revision does not describe them" >&2
  revision=$revision-dirty
fi

out=${out:-dist/$version}
mkdir -p "$out"
out=$(cd "$out" && pwd)
release_file() {
  case "$1" in
    gpuscale-*.oci.tar | gpuscale-*.tgz | gpuscale-*.tar.gz | gpuscale-*.spdx.json | SHA256SUMS) return 0 ;;
    *) return 1 ;;
  esac
}
for f in "$out"/* "$out"/.[!.]*; do
  [ ! -e "$f" ] || release_file "${f##*/}" ||
    die "$out holds ${f##*/}, which is not part of a release: give --out an empty folder"
done
rm -f "$out"/gpuscale-* "$out/SHA256SUMS"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The programs.
if [ -z "$prebuilt" ]; then
  echo "release: building the programs (Release) in build-release/"
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  fi
  cmake -S . -B build-release -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DGPUSCALE_WERROR=ON -DGPUSCALE_BENCH=OFF -DGPUSCALE_UNIT_TESTS=OFF >/dev/null
  cmake --build build-release --target gpuscale-adapter gpuscale-reconciler gpuscale-sim
  prebuilt=$PWD/build-release
fi
for program in adapter reconciler sim; do
  printed=$("$prebuilt/bin/gpuscale-$program" --version)
  [ "$printed" = "gpuscale-$program $version" ] ||
    die "$prebuilt/bin/gpuscale-$program --version says \"$printed\": rebuild after changing VERSION"
done

# 2. The images, as OCI archives.
echo "release: images"
scripts/build-images.sh --prebuilt "$prebuilt" --tag "$version" --save "$work/images" --format oci-archive
for program in adapter reconciler sim; do
  mv "$work/images/gpuscale-$program.oci.tar" "$out/gpuscale-$program-$version.oci.tar"
done

# 3. The chart.
echo "release: chart"
HELM_CACHE_HOME=$work/helm HELM_CONFIG_HOME=$work/helm HELM_DATA_HOME=$work/helm \
  "$helm" package charts/gpuscale --destination "$out" >/dev/null
[ -f "$out/gpuscale-$version.tgz" ] || die "helm package did not write gpuscale-$version.tgz"

# 4. The tarball: both programs, stripped, and the shared libraries they load, except the C
# library's (libc, libm, the dynamic loader, ...: every Linux system has its own, and a copy would
# not match the loader). Each library's Debian package is recorded for the SBOM and NOTICE.
echo "release: tarball"
name=gpuscale-$version-linux-amd64
stage=$work/$name
mkdir -p "$stage/bin" "$stage/lib" "$stage/rules" "$stage/licenses"
glibc='^(ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1)$'
: >"$work/tarball-libraries"
for program in adapter reconciler; do
  install -m 0755 "$prebuilt/bin/gpuscale-$program" "$stage/bin/"
  strip "$stage/bin/gpuscale-$program"
  rpath=$(readelf -d "$stage/bin/gpuscale-$program" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p')
  [ "$rpath" = '$ORIGIN/../lib' ] ||
    die "gpuscale-$program has RPATH \"$rpath\", not \$ORIGIN/../lib (cmake/GpuscaleTargets.cmake)"
  ldd "$prebuilt/bin/gpuscale-$program" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' \
    >>"$work/tarball-libraries"
done
sort -u "$work/tarball-libraries" | while read -r soname path; do
  [[ $soname =~ $glibc ]] && continue
  install -m 0644 "$(readlink -f "$path")" "$stage/lib/$soname"
  # dpkg knows the path it installed, /usr/lib or /lib (merged /usr), under either name.
  real=$(readlink -f "$path")
  package=""
  for candidate in "$path" "$real" "${real#/usr}" "/usr${real#/usr}"; do
    package=$(dpkg-query -S "$candidate" 2>/dev/null | sed -n '1s/:.*//p') && [ -n "$package" ] && break
  done
  [ -n "$package" ] || die "no Debian package owns $path"
  echo "$soname $package" >>"$work/tarball-packages"
done
cut -d' ' -f2 "$work/tarball-packages" | sed 's/:amd64$//' | sort -u >"$work/tarball-package-names"
while read -r package; do
  install -D -m 0644 "/usr/share/doc/$package/copyright" "$stage/licenses/$package/copyright"
done <"$work/tarball-package-names"
install -m 0644 LICENSE NOTICE "$stage/"
install -m 0644 rules/*.yaml "$stage/rules/"
glibc_needed=$(objdump -T "$stage"/bin/* "$stage"/lib/* | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
cat >"$stage/README" <<EOF
gpuscale $version for Linux x86-64 ($revision)

bin/gpuscale-adapter     rules check FILE, rules render, explain, serve
bin/gpuscale-reconciler  plan --from DUMP, explain, run
rules/                   the rule files of the repository (triton.yaml, vllm.yaml, ...)

The programs load the shared libraries in lib/ (through their RPATH, \$ORIGIN/../lib), so nothing
else needs installing: glibc ${glibc_needed#GLIBC_} or newer is all they ask of the system.
LICENSE is gpuscale's licence; NOTICE and licenses/<package>/copyright those of the bundled
libraries. Documentation: the repository's docs/.
EOF
tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out/$name.tar.gz" "$name"

# 5. The SBOM: the tarball's libraries and, per image, every Debian package installed in it, each
# with the licences its copyright file declares.
echo "release: SBOM"
xargs dpkg-query -W -f='${Package} ${Version} ${Architecture}\n' <"$work/tarball-package-names" \
  >"$work/tarball-package-versions"
sbom_args=(--version "$version" --revision "$revision" --out "$out/gpuscale-$version.spdx.json"
           --artifact "$out/$name.tar.gz" --packages "$work/tarball-package-versions")
for program in adapter reconciler sim; do
  image=localhost/gpuscale-$program:$version
  container=$(buildah from --pull-never "$image")
  root=$(buildah mount "$container")
  dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Package} ${Version} ${Architecture}\n' \
    >"$work/image-$program.versions"
  while read -r package _; do
    package=${package%%:*}
    [ -f "$root/usr/share/doc/$package/copyright" ] &&
      install -D -m 0644 "$root/usr/share/doc/$package/copyright" "$work/copyright/$package/copyright"
  done <"$work/image-$program.versions"
  buildah umount "$container" >/dev/null
  buildah rm "$container" >/dev/null
  sbom_args+=(--artifact "$out/gpuscale-$program-$version.oci.tar"
              --packages "$work/image-$program.versions")
done
python3 scripts/lib/sbom.py "${sbom_args[@]}" --copyright-dir "$work/copyright" \
  --copyright-dir /usr/share/doc

# 6. Checksums.
(cd "$out" && sha256sum -- gpuscale-* >SHA256SUMS)
echo "release: $out"
(cd "$out" && ls -l --block-size=K -- *)
