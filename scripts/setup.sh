#!/usr/bin/env bash
# Installs what shardlens needs on Debian 12, idempotently: Debian packages, then the pinned
# tree-sitter-python grammar from npm (fetched at build time, never committed).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
deps_dir="${SHARDLENS_DEPS_DIR:-$here/build/_deps}"

packages=(build-essential cmake ninja-build pkg-config libtree-sitter-dev nlohmann-json3-dev
          libasio-dev catch2 python3 python3-torch ca-certificates neovim
          clang libclang-rt-14-dev libtorch-dev libmimalloc-dev)
# The machine image may bring its own Node.js; only ask Debian for one when there is none.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# tree-sitter-python 0.23.6: the newest grammar whose parser ABI (14) Debian's libtree-sitter 0.20.7 loads.
grammar_version="0.23.6"
grammar_sha256="aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a"
grammar_dir="$deps_dir/tree-sitter-python"
stamp="$grammar_dir/.shardlens-$grammar_version-$grammar_sha256"
if [ ! -f "$stamp" ]; then
  echo "setup: fetching tree-sitter-python@$grammar_version from npm"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "tree-sitter-python@$grammar_version" >/dev/null)
  tarball="$work/tree-sitter-python-$grammar_version.tgz"
  echo "$grammar_sha256  $tarball" | sha256sum -c --quiet - || {
    echo "setup: checksum mismatch for tree-sitter-python@$grammar_version" >&2; exit 1; }
  rm -rf "$grammar_dir" && mkdir -p "$grammar_dir"
  tar -xzf "$tarball" -C "$grammar_dir" --strip-components=1 package/src package/LICENSE package/package.json
  touch "$stamp"
fi
echo "setup: ok (grammar in $grammar_dir)"

# The LSP end-to-end tests' Node client (tests/lsp/package-lock.json: vscode-languageserver-protocol,
# vscode-jsonrpc), installed again only when the lockfile changed.
lsp_dir="$here/tests/lsp"
lsp_stamp="$lsp_dir/node_modules/.shardlens-npm-ci"
if [ ! -d "$lsp_dir/node_modules" ] || [ ! -f "$lsp_stamp" ] || [ "$lsp_dir/package-lock.json" -nt "$lsp_stamp" ]; then
  echo "setup: installing the LSP test client (npm ci in tests/lsp)"
  npm ci --prefix "$lsp_dir" --no-audit --no-fund
  touch "$lsp_stamp"
fi

# The VS Code extension's build, test and packaging tools (editors/vscode/package-lock.json:
# vscode-languageclient, typescript, @vscode/vsce), again only when the lockfile changed. No install
# scripts: none is needed to compile, test or package.
vsc_dir="$here/editors/vscode"
vsc_stamp="$vsc_dir/node_modules/.shardlens-npm-ci"
if [ ! -d "$vsc_dir/node_modules" ] || [ ! -f "$vsc_stamp" ] || [ "$vsc_dir/package-lock.json" -nt "$vsc_stamp" ]; then
  echo "setup: installing the VS Code extension's npm packages (npm ci in editors/vscode)"
  npm ci --prefix "$vsc_dir" --no-audit --no-fund --ignore-scripts
  touch "$vsc_stamp"
fi
