#!/usr/bin/env bash
# `make bench` part: the language-server benchmark (bench/lsp/lsp_bench.js) against the built
# binary. Installs the pinned npm packages (vscode-jsonrpc, pyright) from package-lock.json with
# `npm ci` the first time and again only when the lockfile changes (a stamp in node_modules/).
# Arguments are passed to lsp_bench.js (e.g. --edits 50, --no-pyright); the server defaults to
# $SHARDLENS, else $BUILD/shardlens, else build/shardlens.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "bench/lsp: node and npm are needed (Node >= 18)" >&2
  exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 18 ]; then
  echo "bench/lsp: Node >= 18 is needed, this is $(node --version)" >&2
  exit 1
fi

stamp="$here/node_modules/.lsp-bench-stamp"
want="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -e "$here/node_modules/pyright/langserver.index.js" ] ||
   [ ! -e "$here/node_modules/vscode-jsonrpc/node.js" ]; then
  echo "bench/lsp: npm ci --prefix bench/lsp" >&2
  npm ci --prefix "$here" --no-audit --no-fund --loglevel=error >&2
  echo "$want" > "$stamp"
fi

server="${SHARDLENS:-${BUILD:-build}/shardlens}"
exec node "$here/lsp_bench.js" --server "$server" "$@"
