#!/usr/bin/env bash
# Benchmark (not a test): round trip of `tools/call` running `echo hi` over
# MCP stdio, for bashtools-mcp and two popular MCP shell servers, beside
# running `bash -c 'echo hi'` directly from the same driver.
#
#   bash benches/mcp/run.sh [N]      # N calls per server, default 500
#   CALLS=3000 (default) sets the calls of 60 KB for memory.py, which also
#   times start-to-initialize and idle RSS of each server.
#
# Installs the other servers at the versions measured (PyPI into
# target/bench-venv, npm into target/bench-node), builds bashtools-mcp in
# release mode, and prints a Markdown table for BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

N=${1:-500}
MCP_SHELL_SERVER=1.1.14
DESKTOP_COMMANDER=0.2.52

cargo build --quiet --release --bin bashtools-mcp
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

venv=target/bench-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcp-shell-server==$MCP_SHELL_SERVER"

node_dir=target/bench-node
# --ignore-scripts: a dependency's install script downloads a browser, which
# the shell tool does not need.
npm install --prefix "$node_dir" --ignore-scripts --no-audit --no-fund --loglevel=error \
  "@wonderwhy-er/desktop-commander@$DESKTOP_COMMANDER" >/dev/null

# desktop-commander keeps its config and usage statistics under HOME.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

echo "bashtools-mcp $(git describe --always --dirty), mcp-shell-server $MCP_SHELL_SERVER, desktop-commander $DESKTOP_COMMANDER; $(nproc) CPUs"
HOME=$scratch python3 benches/mcp/bench.py -n "$N" \
  --bashtools "$target_dir/release/bashtools-mcp" \
  --desktop-commander "$node_dir/node_modules/@wonderwhy-er/desktop-commander/dist/index.js" \
  --mcp-shell-server "$venv/bin/mcp-shell-server"
HOME=$scratch python3 benches/mcp/memory.py -n "${CALLS:-3000}" \
  --bashtools "$target_dir/release/bashtools-mcp" \
  --desktop-commander "$node_dir/node_modules/@wonderwhy-er/desktop-commander/dist/index.js" \
  --mcp-shell-server "$venv/bin/mcp-shell-server"
