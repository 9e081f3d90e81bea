#!/usr/bin/env bash
# The official MCP conformance suite against both sides of meta-tools (issue 58, item 7).
#
# Installs Node 22 (the `node` package on npm) and the pinned suite versions from npm into
# .ci/conformance/ (not in git), then runs tests/conformance/run.py once per suite version:
# the server scenarios against `meta-tools serve --transport http`, the client scenarios
# against tests/conformance/client.py. It fails when an outcome differs from what
# tests/conformance/{expected_failures,not_declared,known_open}.json say.
# Run it from the virtual environment that has meta-tools installed (`.ci/run` does).
set -euo pipefail
cd "$(dirname "$0")/../.."

NODE_VERSION=22.23.3
SUITE_VERSIONS=(0.1.16 0.2.0-alpha.12)
PREFIX=".ci/conformance"

if ! command -v npm >/dev/null 2>&1; then
  (apt-get install -y -qq npm >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq npm >/dev/null 2>&1)) \
    || { echo "conformance: npm is needed to install Node $NODE_VERSION and the suite (apt-get install npm)" >&2; exit 1; }
fi

npm_install() {  # folder, package@version
  npm install --no-audit --no-fund --loglevel=error --prefix "$1" "$2" >/dev/null
}

npm_install "$PREFIX/node" "node@$NODE_VERSION"
NODE_BIN="$(pwd)/$PREFIX/node/node_modules/.bin"
if [ "$("$NODE_BIN/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  echo "conformance: $NODE_BIN/node is not Node $NODE_VERSION; the npm package 'node' needs its install script (npm's allow-scripts setting)" >&2
  exit 1
fi
export PATH="$NODE_BIN:$PATH"

rm -rf "$PREFIX/results"
mkdir -p "$PREFIX/results"
status=0
for version in "${SUITE_VERSIONS[@]}"; do
  npm_install "$PREFIX/suite-$version" "@modelcontextprotocol/conformance@$version"
  echo "== MCP conformance suite $version (Node $NODE_VERSION)"
  python -m tests.conformance.run \
    --suite "$PREFIX/suite-$version/node_modules/.bin/conformance" \
    --out "$PREFIX/results/$version" \
    --table "$PREFIX/results/table.md" || status=1
done
exit "$status"
