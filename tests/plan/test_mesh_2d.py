#!/usr/bin/env python3
"""2-D hybrids (issue 37, item 3): each mesh axis carries its own parallelism. A Mixtral-style MoE
(../shared/fixtures/moe.py: 8 layers, 8 experts, top-2, 32 heads, 8 KV heads, dim 4096, vocab
32000) on a 4x8 Galaxy shape gets its experts spread over the 4 rows (2 per row) and tensor
parallelism over the 8 columns, with these collectives per forward, counted by hand:
  per layer  1 all-reduce (attention wo, row-parallel on 'model')
             1 all-reduce (the experts' w2, row-parallel inside each expert, on 'model')
             2 all-to-all (dispatch and combine the routed tokens over the 'batch' rows)
  once       1 all-gather of the column-parallel LM head's logits
so 16 all-reduce + 16 all-to-all + 1 all-gather = 33, each all-to-all moving the batch's top-2
copies of the hidden states: 32 x 2 x 4096 x 2 bytes.

Usage: test_mesh_2d.py PATH/TO/shardlens
"""
import collections
import json
import os
import subprocess
import sys

SHARDLENS = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOE = os.path.join(ROOT, "..", "shared", "fixtures", "moe.py")
results = []


def check(name, condition, detail=""):
    results.append(condition)
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)[:2000]))


def plan(*args):
    p = subprocess.run([SHARDLENS, "plan", *args, "--format", "json"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        check("plan " + " ".join(args), False, p.stderr)
        return None
    return json.loads(p.stdout)


def counts(mesh):
    c = collections.Counter()
    for x in mesh["collectives"]:
        c[(x["kind"], x["axis"])] += x["count"]
    return c


j = plan(MOE, "--mesh", "4x8", "--batch", "32")
if j:
    m = j["meshes"][0]
    check("decode, batch 32, 4x8: experts over the rows, tensor parallel over the columns",
          m["mode"] == "expert parallel over 'batch' rows, tensor parallel on 'model'", m["mode"])
    c = counts(m)
    want = {("all_reduce", "model"): 16, ("all_to_all", "batch"): 16, ("all_gather", "model"): 1}
    check("collectives by hand: 16 all-reduce on 'model', 16 all-to-all on 'batch', 1 all-gather", dict(c) == want, dict(c))
    check("33 collectives per forward", m["totals"]["collectives"] == 33, m["totals"]["collectives"])
    a2a = [x for x in m["collectives"] if x["kind"] == "all_to_all"]
    check("each all-to-all moves the batch's top-2 hidden states (32 x 2 x 4096 x 2 bytes)",
          a2a and all(x["bytes"] == 32 * 2 * 4096 * 2 for x in a2a), [x["bytes"] for x in a2a])
    check("the all-to-alls are at the experts, dispatch then combine",
          sorted(x["why"].split(":")[1].split()[0] for x in a2a) == ["combine", "dispatch"] and all(x["at"].endswith("moe.experts") for x in a2a),
          [(x["at"], x["why"]) for x in a2a])
    w2 = [p for p in m["parameters"] if p["name"].endswith("experts.0.w2.weight")]
    w1 = [p for p in m["parameters"] if p["name"].endswith("experts.0.w1.weight")]
    check("inside each expert: w1 column, w2 row on 'model'",
          w1 and w2 and w1[0]["layout"] == "column" and w2[0]["layout"] == "row" and w2[0]["spec"] == [None, "model"], (w1[:1], w2[:1]))
    check("which row holds which experts is said", any("row r holds experts 2·r .. 2·r + 1" in n for n in m["notes"]), m["notes"])
    # One copy of the weights: the prefill beside the decode plan keeps the experts on their rows.
    pre = j.get("prefill", {}).get("meshes", [{}])[0]
    check("prefill keeps the decode plan's rows mode (the experts stay on their rows)", pre.get("mode") == m["mode"], pre.get("mode"))
    pc = counts(pre) if pre else {}
    check("prefill: the same kinds of collectives on the same axes", set(pc) == set(want), dict(pc))

# Batch 1 does not divide the rows: every row has every token, so the rows' experts are combined
# by an all-reduce over 'batch' when this mode is listed; the choice may differ, the reason not.
j = plan(MOE, "--mesh", "4x8", "--batch", "1")
if j:
    m = j["meshes"][0]
    modes = [m["mode"]] + [a["name"] for a in m["alternatives"]]
    check("batch 1: the experts-over-rows mode is costed", "expert parallel over 'batch' rows, tensor parallel on 'model'" in modes, modes)
    if m["mode"].startswith("expert parallel over"):
        c = counts(m)
        check("batch 1, experts over rows: one all-reduce over 'batch' per layer, no all-to-all",
              c[("all_reduce", "batch")] == 8 and c[("all_to_all", "batch")] == 0, dict(c))

# Experts that do not divide the rows: the mode is impossible and says why.
j = plan(MOE, "--model", "MoETransformer(MoEArgs(num_experts=6))", "--mesh", "4x8", "--batch", "32")
if j:
    m = j["meshes"][0]
    alt = [a for a in m["alternatives"] if a["name"].startswith("expert parallel over 'batch' rows")]
    check("6 experts on 4 rows: the mode is not possible, and says so",
          m["mode"] != "expert parallel over 'batch' rows, tensor parallel on 'model'" and alt and not alt[0]["feasible"]
          and "do not divide the 4 rows" in alt[0]["why_rejected"], (m["mode"], alt))

# A dense model has no experts: the mode is not offered.
j = plan(os.path.join(ROOT, "..", "shared", "fixtures", "llama.py"), "--mesh", "4x8")
if j:
    m = j["meshes"][0]
    check("a dense model: no experts-over-rows mode", not m["mode"].startswith("expert parallel over") and
          not any(a["name"].startswith("expert parallel over 'batch'") for a in m["alternatives"]), [a["name"] for a in m["alternatives"]])

# Sequence parallel over the rows, tensor parallel over the columns: a DiT (28 blocks, SDPA) in
# one 1024-token forward on 2x4. By hand: each block's attention gathers the other row's keys and
# values along 'batch' (2 all-gathers per block, 56 in all), each of the whole sequence's K (or V)
# for the column's 4 of 16 heads: 1024 x 16/4 x 72 x 2 bytes.
DIT = os.path.join(ROOT, "tests", "models", "pipeline", "dit.py")
j = plan(DIT, "--mesh", "2x4")
if j:
    m = j["meshes"][0]
    check("DiT on 2x4: sequence parallel over the rows, tensor parallel over the columns",
          m["mode"] == "sequence parallel over 'batch' rows, tensor parallel on 'model'", m["mode"])
    if m["mode"].startswith("sequence parallel over"):
        gathers = [x for x in m["collectives"] if x["axis"] == "batch"]
        check("56 all-gathers along 'batch' (keys and values, 28 blocks), nothing else on the rows",
              sum(x["count"] for x in gathers) == 56 and all(x["kind"] == "all_gather" for x in gathers), [(x["kind"], x["count"], x["why"]) for x in gathers])
        check("each gathers one column's keys or values of the whole sequence (1024 x 4 heads x 72 x 2 bytes)",
              all(x["bytes"] == 1024 * 4 * 72 * 2 for x in gathers), [x["bytes"] for x in gathers])
    # Decode has no sequence to split: the mode is not offered there.
j = plan(DIT, "--mesh", "2x4", "--phase", "decode")
if j:
    m = j["meshes"][0]
    check("decode: no sequence-over-rows mode", not m["mode"].startswith("sequence parallel over") and
          not any(a["name"].startswith("sequence parallel over 'batch'") for a in m["alternatives"]), m["mode"])
# What the planner cannot split over the rows says why: hand-written attention, convolutions inside.
for path, why in ((os.path.join(ROOT, "tests", "models", "mingpt.py"), "product of two activations"),
                  (os.path.join(ROOT, "tests", "models", "pipeline", "vae_decoder.py"), "convolution inside the network")):
    j = plan(path, "--mesh", "2x4", "--phase", "prefill")
    if j:
        alt = [a for a in j["meshes"][0]["alternatives"] if a["name"].startswith("sequence parallel over 'batch' rows")]
        check(f"{os.path.basename(path)}: sequence over the rows not possible: {why}", alt and not alt[0]["feasible"] and why in alt[0]["why_rejected"],
              alt or j["meshes"][0]["mode"])

# The divisibility diagnostic names the shape of the same devices whose model axis divides.
j = plan(os.path.join(ROOT, "tests", "models", "pipeline", "text_encoder.py"), "--model", "TextEncoder(heads=12)", "--mesh", "1x8")
if j:
    d = [x for x in j["diagnostics"] if x["code"] == "divisibility-heads"]
    check("12 heads on 1x8: the diagnostic names mesh 2x4 and --devices 8", d and "mesh 2x4" in d[0]["message"] and "--devices 8" in d[0]["message"],
          d[:1])

# Memory decides the rows' mode too: a 70B-class decoder (80 layers, dim 8192) in prefill with a
# batch of 32 on 8x4 fits only when its weights are split over both axes (140 GB / 32 devices);
# the rows' data-parallel mode, fastest unconstrained, splits them over the 4 columns at most.
DENSE = os.path.join(ROOT, "bench", "models", "dense_405b.py")
j = plan(DENSE, "--model", "Transformer(ModelArgs(dim=8192, n_layers=80, n_heads=64, n_kv_heads=8, ffn_dim=28672))",
         "--mesh", "galaxy", "--phase", "prefill", "--batch", "32", "--prefill-weights", "own")
if j:
    m = j["meshes"][0]
    check("70B prefill on 8x4: falls back to a mode whose layout fits, not 'no layout fits'",
          m["memory_fallback"] and m["totals"]["memory_per_device_bytes"] <= 12e9 * 0.9 and
          not any(d["code"] == "memory-does-not-fit" for d in j["diagnostics"]) and m["mode"].startswith("2-D tensor parallel"),
          (m["mode"], m["totals"]["memory_per_device_bytes"], [d["code"] for d in j["diagnostics"]]))

print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
