#!/usr/bin/env bash
# Exact-graph timings for the bundled example (examples/mistral_7b.py): export (the user's Python
# builds the model on the meta device and saves TorchScript), load + evaluation by shardlens-graph
# (LibTorch), the cached answer, and planning on the exact graph next to the static plan.
# Prints figures; asserts nothing.
#   bench/torch_bench.sh [BUILD_DIR] [SCRIPT.py]
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
script="${2:-$here/examples/mistral_7b.py}"
shardlens="$build/shardlens"
graph="$build/shardlens-graph"
for exe in "$shardlens" "$graph"; do
  [ -x "$exe" ] || { echo "torch_bench: $exe not built (make build; shardlens-graph needs libtorch-dev)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SHARDLENS_CACHE_DIR="$work/cache"
pt="$work/model.pt"

now() { echo "$EPOCHREALTIME"; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }
run() {  # label, repetitions, command...
  local label="$1" reps="$2"; shift 2
  local best=""
  for _ in $(seq "$reps"); do
    local t0 t1
    t0="$(now)"; "$@" >/dev/null; t1="$(now)"
    local t; t="$(ms "$t0" "$t1")"
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best="$t"; fi
  done
  printf "  %-58s %7s ms\n" "$label" "$best"
}

echo "exact graph of $(basename "$script") (best of 3 unless noted)"
run "export (python + torch import + build on meta + script + save)" 3 "$shardlens" export "$script" -o "$pt"
python="$("$shardlens" export "$script" -o "$pt" --format json | sed -n 's/.*"python": "\(.*\)".*/\1/p')"
run "  of which: python + import torch alone" 3 "$python" -c "import torch"
run "shardlens-graph: load only (--no-graph)" 3 "$graph" "$pt" --no-graph
run "shardlens-graph: load + evaluate forward (decode, 1 token)" 3 "$graph" "$pt"
run "shardlens-graph: load + evaluate forward (prefill, 2048 tokens)" 3 "$graph" "$pt" --tokens 2048
rm -rf "$SHARDLENS_CACHE_DIR"
run "shardlens graph --format json (cold cache, 1 run)" 1 "$shardlens" graph "$pt" --format json
run "shardlens graph --format json (cached)" 3 "$shardlens" graph "$pt" --format json
run "shardlens plan --graph (cached graph, t3k)" 3 "$shardlens" plan "$script" --graph "$pt"
run "shardlens plan (static, t3k)" 3 "$shardlens" plan "$script"
size="$(stat -c %s "$pt")"
ops="$("$shardlens" graph "$pt" --format json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(len(j["graph"]["ops"]))')"
printf "  TorchScript file: %s bytes (meta tensors: no weight data); %s graph ops\n" "$size" "$ops"
rss="$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$graph" "$pt")"
printf "  shardlens-graph peak RSS: %s KiB\n" "$rss"

# verify: the full-size plan checked numerically on a reduced config of the same script (random
# weights), one thread per device.
if [ "$script" = "$here/examples/mistral_7b.py" ]; then
  reduced="Transformer(ModelArgs(dim=256, n_layers=2, head_dim=32, hidden_dim=512, n_heads=8, n_kv_heads=8, vocab_size=1024, max_seq_len=256))"
  small="$work/small.pt"
  "$shardlens" plan "$script" --mesh 1x2 --mesh 1x4 --mesh 1x8 --format json > "$work/plan.json"
  echo "verify (full-size plan on $reduced, 1 x 8 tokens)"
  run "export --weights random (reduced config)" 1 "$shardlens" export "$script" --model "$reduced" --weights random -o "$small"
  for mesh in 1x2 1x4 1x8; do
    run "shardlens verify --mesh $mesh (load + reference + devices)" 3 "$shardlens" verify "$small" --mesh "$mesh" --plan "$work/plan.json"
  done
  "$shardlens" verify "$small" --mesh 1x8 --plan "$work/plan.json" | sed 's/^/    /'
fi
