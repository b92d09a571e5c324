#!/bin/bash
# A 3-model pipeline (text encoder, DiT, VAE decoder) planned on every candidate shape of 8 and of
# 32 devices: median wall time of the whole `shardlens plan` process over 9 runs (issue 37 target:
# < 200 ms for 32 devices).
set -euo pipefail
shardlens=${1:-build/shardlens}
models=tests/models/pipeline
for devices in 8 32; do
  times=()
  for run in 1 2 3 4 5 6 7 8 9 10; do
    start=$(date +%s%N)
    "$shardlens" plan "$models/text_encoder.py" "$models/dit.py" "$models/vae_decoder.py" --devices "$devices" --format json > /dev/null
    end=$(date +%s%N)
    [[ $run == 1 ]] || times+=($(( (end - start) / 1000 )))  # the first run warms the page cache
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 5p)
  shapes=$("$shardlens" plan "$models/dit.py" --devices "$devices" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["pipeline"]["candidates"]))')
  printf 'pipeline of 3 models over %s shapes of %s devices: %.1f ms median (whole process, target < 200 ms)\n' "$shapes" "$devices" "$(awk -v us="$median" 'BEGIN { print us / 1000 }')"
done
