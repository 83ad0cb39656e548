#!/usr/bin/env bash
# One version source: the VERSION file holds a semantic version, and every place that carries the
# version says the same: each program's --version, the chart's version and appVersion (and so the
# image tags it defaults to), the kustomize bases' image tags, CHANGELOG.md's latest release, and
# what scripts/build-images.sh puts in the images' version label. (release_test.sh reads the labels
# of the built images.)
set -uo pipefail
src=${GPUSCALE_SOURCE_DIR:?}
build=${GPUSCALE_BINARY_DIR:?}
version=$(cat "$src/VERSION")
failures=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}
chart_field() { sed -n "s/^$1: *\"\\{0,1\\}\\([^\"]*\\)\"\\{0,1\\}$/\\1/p" "$src/charts/gpuscale/Chart.yaml"; }

check "VERSION holds one semantic version ($version)" \
  '[ "$(wc -l <"$src/VERSION")" = 1 ] && [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]'
for program in adapter reconciler sim; do
  binary=$build/bin/gpuscale-$program
  if [ -x "$binary" ]; then
    check "gpuscale-$program --version prints $version" \
      '[ "$("$binary" --version)" = "gpuscale-$program $version" ]'
  else
    echo "skip gpuscale-$program --version (not built)"
  fi
done
check "the chart's version is $version" '[ "$(chart_field version)" = "$version" ]'
check "the chart's appVersion is $version" '[ "$(chart_field appVersion)" = "$version" ]'
check "the chart's image tags default to appVersion" \
  'grep -q "tag | default .root.Chart.AppVersion" "$src/charts/gpuscale/templates/_helpers.tpl" &&
     [ "$(grep -c "^    tag: \"\"$" "$src/charts/gpuscale/values.yaml")" = 2 ]'
for base in adapter reconciler; do
  check "manifests/$base names the image gpuscale-$base:$version" \
    'grep -q "image: gpuscale-$base:$version$" "$src/manifests/$base/deployment.yaml"'
done
check "CHANGELOG.md's latest release is $version" \
  '[ "$(grep -m1 "^## \[[0-9]" "$src/CHANGELOG.md")" = "## [$version]" ]'
check "scripts/build-images.sh labels the images with VERSION" \
  'grep -q "^version=\$(cat VERSION)$" "$src/scripts/build-images.sh" &&
     grep -q "org.opencontainers.image.version=\"\${VERSION}\"" "$src/Dockerfile"'

if [ $failures -gt 0 ]; then
  echo "$failures version check(s) failed"
  exit 1
fi
echo "version checks passed"
