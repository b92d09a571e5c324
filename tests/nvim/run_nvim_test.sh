#!/bin/sh
# Runs tests/nvim/test_nvim.lua in headless Neovim against a shardlens binary.
# usage: tests/nvim/run_nvim_test.sh path/to/shardlens
set -u
here=$(cd "$(dirname "$0")" && pwd)
server=${1:-${SHARDLENS:-}}
if [ -z "$server" ]; then
  echo "usage: $0 path/to/shardlens" >&2
  exit 2
fi
if ! command -v nvim >/dev/null 2>&1; then
  echo "test_nvim: nvim not found (Debian: apt-get install neovim)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
# A private home: no user config, and the LSP log (server stderr included) lands in $work.
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state" \
       XDG_CACHE_HOME="$work/cache"
export SHARDLENS="$server" SHARDLENS_TEST_TMP="$work/t" SHARDLENS_NVIM_TEST="$here/test_nvim.lua"
status=0
timeout -k 5 170 nvim --headless --clean -u NONE -i NONE -n \
  -c 'lua dofile(os.getenv("SHARDLENS_NVIM_TEST"))' </dev/null || status=$?
if [ "$status" -ne 0 ]; then
  [ "$status" -eq 124 ] && echo "test_nvim: timed out after 170 s" >&2
  log=$(find "$work" -name lsp.log 2>/dev/null | head -n 1)
  if [ -n "$log" ] && [ -s "$log" ]; then
    echo "test_nvim: last lines of the Neovim LSP log ($log):" >&2
    tail -n 40 "$log" >&2
  fi
fi
exit "$status"
