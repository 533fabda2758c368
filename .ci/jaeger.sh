#!/usr/bin/env bash
# Builds Jaeger v2, the OTLP backend the span export tests send to and
# query, once into a cache directory, and prints the binary's path.
#
# go install refuses the module (its go.mod has replace directives), so
# its source, as the module proxy serves it, is built as the main module.
# Jaeger v2 ships from the v1 module path: v1.76.0 is Jaeger v2.13.
# A cold build took 3 to 9 minutes on two cores (546 s on the slowest);
# a cached one, none.
set -euo pipefail
version=v1.76.0
cache="${ACPSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acpscope-ci}"
bin="$cache/jaeger-$version"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  work="$(mktemp -d)"
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  # Outside any module, so that our go.mod and go.sum stay as they are.
  dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/jaegertracing/jaeger@$version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  start=$SECONDS
  (cd "$work/src" && GOWORK=off GOFLAGS=-mod=mod go build -o "$bin.tmp" ./cmd/jaeger)
  mv "$bin.tmp" "$bin"
  echo "jaeger.sh: built Jaeger $version in $((SECONDS - start)) s" >&2
fi
echo "$bin"
