#!/usr/bin/env bash
# Prints the path of the Go toolchain tests/cluster builds with, after checking that it is new enough
# for every wrapper module under tests/cluster (their `go` lines: with GOTOOLCHAIN=local, as
# build.sh runs it, an older Go refuses them). Otherwise says on stderr what is needed and exits 1.
# It never downloads a toolchain.
# Environment: GO (the go binary; default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
cluster=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
need=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' "$cluster"/*/go.mod | sort -V | tail -n 1)
have=""
if [ -x "$go" ]; then
  have=$(cd / && GOTOOLCHAIN=local "$go" version 2>/dev/null | sed -n 's/^go version go\([0-9][0-9.]*\).*/\1/p')
fi
if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ]; then
  cat >&2 <<MSG
The test control plane (tests/cluster) needs Go $need or newer (the go lines of tests/cluster/*/go.mod);
found: ${have:+go $have at }${have:-no Go toolchain ($go)}.
Debian 12's golang package (1.19) is too old. Install a Go release into /usr/local/go (https://go.dev/dl/),
or point GO=/path/to/bin/go at one. With any Go 1.21 or newer on PATH,
  GOTOOLCHAIN=go$need go version
fetches that release through the Go module proxy (checked against the Go checksum database) into the
module cache: GO=\$(go env GOMODCACHE)/golang.org/toolchain@v0.0.1-go$need.linux-amd64/bin/go
MSG
  exit 1
fi
echo "$go"
