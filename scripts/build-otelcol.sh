#!/usr/bin/env bash
# Builds the OpenTelemetry Collector of deploy/otelcol/builder.yaml (the components deploy/otelcol/extscope.yaml
# uses) with the Collector builder, from the Go module proxy, and prints the binary's path on stdout.
#
# Cached outside the repository, keyed by the manifest and the Go version:
#   ${XDG_CACHE_HOME:-~/.cache}/extscope/otelcol/<hash>/otelcol-extscope
# A second run with the same manifest prints the cached path at once. A failed build prints the builder's output
# and exits non-zero; nothing half-built is ever left at the cached path (the binary is moved there when done).
# The test suite runs this (test/e2e/otel-collector.test.ts), and so does CI before the suite.
set -euo pipefail

BUILDER_VERSION=v0.161.0
root="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$root/deploy/otelcol/builder.yaml"

command -v go >/dev/null || { echo "build-otelcol: the go command is missing (Go 1.24 or newer builds the Collector)" >&2; exit 1; }
go_version="$(go env GOVERSION)"
key="$( { cat "$manifest"; echo "$BUILDER_VERSION $go_version"; } | sha256sum | cut -c1-16)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/extscope/otelcol"
target="$cache/$key/otelcol-extscope"

if [ -x "$target" ]; then
  echo "$target"
  exit 0
fi

mkdir -p "$cache"
# One build at a time per machine (two test runs starting together wait for the first).
exec 9>"$cache/.lock"
flock 9
if [ -x "$target" ]; then
  echo "$target"
  exit 0
fi

started=$(date +%s)
builder="$cache/builder-$BUILDER_VERSION/builder"
if [ ! -x "$builder" ]; then
  echo "build-otelcol: installing the Collector builder $BUILDER_VERSION" >&2
  GOBIN="$cache/builder-$BUILDER_VERSION" go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION" >&2
fi

work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$manifest" "$work/builder.yaml"
echo "build-otelcol: building $(basename "$target") ($key) in $work" >&2
if ! (cd "$work" && "$builder" --config builder.yaml --ldflags='-s -w' >"$work/builder.log" 2>&1); then
  cat "$work/builder.log" >&2
  echo "build-otelcol: the Collector build failed (output above)" >&2
  exit 1
fi
[ -x "$work/build/otelcol-extscope" ] || { cat "$work/builder.log" >&2; echo "build-otelcol: the builder made no binary" >&2; exit 1; }
mkdir -p "$(dirname "$target")"
mv "$work/build/otelcol-extscope" "$target.partial"
mv "$target.partial" "$target"
echo "build-otelcol: built in $(( $(date +%s) - started )) s, $(du -h "$target" | cut -f1)" >&2
echo "$target"
