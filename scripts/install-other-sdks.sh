#!/usr/bin/env bash
# Installs the MCP servers of other languages that the wrap and proxy tests run, pinned, into a cache outside
# the repository (~/.cache/extscope/, or $EXTSCOPE_CACHE), once per set of versions:
#   * Python: a virtualenv with the `mcp` SDK and FastMCP (from PyPI), one with FastMCP 2.x (its own `mcp` 1.x), and
#     one with the reference time server (`mcp-server-time`, an MCP server as users install it);
#   * Go: the server of test/fixtures/go built on the Go SDK (from the Go module proxy);
#   * Java: the server of test/fixtures/java built on the Java SDK (from Maven Central), one jar with its dependencies.
# Prints one `name=path` line each (python=, fastmcp2= and time= the virtualenvs, go= the binary, java= the jar).
# Fails loudly when a registry is unreachable: the tests that need it fail then, never skip. Nothing half-built is
# left at a cached path (each is moved there once complete).
set -euo pipefail

MCP_VERSION=2.3.0
FASTMCP_VERSION=4.1.6
# FastMCP 2.x apps redirect `POST /mcp/` to `/mcp` with the upstream's absolute URL (the proxy's redirect case).
FASTMCP2_VERSION=2.14.7
# The MCP SDK under it, pinned too (FastMCP 2.x requires the 1.x line).
FASTMCP2_MCP_VERSION=1.30.0
TIME_SERVER_VERSION=2026.10.19
GO_SDK_VERSION=v1.8.0
JAVA_SDK_VERSION=2.2.0
root="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${EXTSCOPE_CACHE:-$HOME/.cache/extscope}"
mkdir -p "$CACHE"
# One install at a time per machine (two test runs starting together wait for the first).
exec 9>"$CACHE/.other-sdks.lock"
flock 9

# Keyed by the fixture's sources and the toolchain too, so an edited fixture is built again.
key() { { cat "$@"; echo "$GO_SDK_VERSION $JAVA_SDK_VERSION"; } | sha256sum | cut -c1-12; }

VENV="$CACHE/python-mcp-$MCP_VERSION-fastmcp-$FASTMCP_VERSION"
if [ ! -f "$VENV/.installed" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" "fastmcp==$FASTMCP_VERSION" >&2
  touch "$VENV/.installed"
fi

VENV2="$CACHE/python-mcp-$FASTMCP2_MCP_VERSION-fastmcp-$FASTMCP2_VERSION"
if [ ! -f "$VENV2/.installed" ]; then
  rm -rf "$VENV2"
  python3 -m venv "$VENV2" >&2
  "$VENV2/bin/pip" install --quiet --disable-pip-version-check "mcp==$FASTMCP2_MCP_VERSION" "fastmcp==$FASTMCP2_VERSION" >&2
  touch "$VENV2/.installed"
fi

VENV_TIME="$CACHE/python-mcp-server-time-$TIME_SERVER_VERSION"
if [ ! -f "$VENV_TIME/.installed" ]; then
  rm -rf "$VENV_TIME"
  python3 -m venv "$VENV_TIME" >&2
  "$VENV_TIME/bin/pip" install --quiet --disable-pip-version-check "mcp-server-time==$TIME_SERVER_VERSION" >&2
  touch "$VENV_TIME/.installed"
fi

command -v go >/dev/null || { echo "install-other-sdks: the go command is missing" >&2; exit 1; }
go_src="$root/test/fixtures/go"
GO_BIN="$CACHE/go-sdk-$GO_SDK_VERSION/$(key "$go_src"/go.mod "$go_src"/go.sum "$go_src"/*.go <(go env GOVERSION))/server"
if [ ! -x "$GO_BIN" ]; then
  mkdir -p "$(dirname "$GO_BIN")"
  # The module's go.sum pins every module it downloads; -mod=readonly refuses anything it does not list.
  (cd "$go_src" && go build -mod=readonly -trimpath -o "$GO_BIN.partial" .) >&2
  mv "$GO_BIN.partial" "$GO_BIN"
fi

command -v mvn >/dev/null || { echo "install-other-sdks: the mvn command is missing (Maven builds the Java server)" >&2; exit 1; }
java_src="$root/test/fixtures/java"
JAVA_JAR="$CACHE/java-sdk-$JAVA_SDK_VERSION/$(key "$java_src"/pom.xml $(find "$java_src/src" -type f | sort) <(java -version 2>&1))/server.jar"
if [ ! -f "$JAVA_JAR" ]; then
  # Built in a copy, so nothing is written into the repository; the Maven repository is the cache's own.
  build="$(mktemp -d)"
  trap 'rm -rf "$build"' EXIT
  cp -r "$java_src/." "$build"
  mvn -B -q -Dmaven.repo.local="$CACHE/maven-repository" -f "$build/pom.xml" package >&2
  mkdir -p "$(dirname "$JAVA_JAR")"
  mv "$build/target/java-mcp-fixture.jar" "$JAVA_JAR.partial"
  mv "$JAVA_JAR.partial" "$JAVA_JAR"
fi

echo "python=$VENV"
echo "fastmcp2=$VENV2"
echo "time=$VENV_TIME"
echo "go=$GO_BIN"
echo "java=$JAVA_JAR"
