#!/usr/bin/env bash
# Installs the MCP servers of other languages that the wrap and proxy tests run, pinned, into a cache outside
# the repository (~/.cache/extscope/, or $EXTSCOPE_CACHE), once per set of versions. Prints the folder.
# Fails loudly when a registry is unreachable: the tests that need it fail then, never skip.
set -euo pipefail

MCP_VERSION=2.3.0
FASTMCP_VERSION=4.1.6
CACHE="${EXTSCOPE_CACHE:-$HOME/.cache/extscope}"
VENV="$CACHE/python-mcp-$MCP_VERSION-fastmcp-$FASTMCP_VERSION"

if [ ! -f "$VENV/.installed" ]; then
  rm -rf "$VENV"
  mkdir -p "$CACHE"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" "fastmcp==$FASTMCP_VERSION" >&2
  touch "$VENV/.installed"
fi
echo "$VENV"
