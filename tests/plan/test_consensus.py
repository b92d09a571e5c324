#!/usr/bin/env python3
"""Standard architectures against the practitioners' consensus (issue 36, "Done when").

Usage: test_consensus.py PATH/TO/shardlens [NAME ...]

For each architecture of architectures.py (published configurations), on mesh (1, 8):
  tensor   `--strategy tensor` reproduces every consensus layout written below and Megatron's
           collective count (2 all-reduce per transformer layer, 3 per decoder layer with
           cross-attention; none inside attention or between a column and its row layer);
  auto     `--strategy auto` either gives the same layouts, or its output shows the tensor-parallel
           plan as an alternative slower by more than the cost model's error band (10%);
  workload with no --phase, the model's kind and its default workload (decoders: decode with
           prefill beside it; encoders, vision, DiT, VAE: one full forward, no KV cache, never a
           sequence longer than the model's position table);
  diagnose divisibility diagnostics where a consensus layout cannot split (Falcon's 71 heads,
           vocabularies that do not divide 8).
Consensus sources (SHARDING.md §7): Megatron-LM §3 (arXiv 1909.08053), HF `base_model_tp_plan`
(q/k/v/gate/up "colwise", o/down "rowwise"), torchtitan `parallelize_llama`, ColossalAI ShardFormer
policies; convs, patch embeddings, adaLN and timestep MLPs, routers: not sharded by any of them.
Prints `ok NAME` / `FAIL NAME: why` per check and closes with `N passed, N failed`.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ARCH = os.path.join(HERE, "architectures.py")
SHARDLENS = sys.argv[1]
ONLY = sys.argv[2:]
BAND = 0.10  # the planner's stated error band (plan.cpp kEstimateErrorBand)

COLUMN, ROW, REPLICATED = {"column"}, {"row"}, {"replicated"}
MEGATRON_ATTN = [(r"\.attn\.(q|k|v)_proj\.weight$", COLUMN), (r"\.attn\.o_proj\.weight$", ROW)]
MEGATRON_MLP = [(r"\.mlp\.(gate|up)_proj\.weight$", COLUMN), (r"\.mlp\.down_proj\.weight$", ROW)]
ROW_AT = r"\.(attn|cross)\.o_proj$|\.mlp\.down_proj$|\.shared_expert\.down_proj$"

# name: (consensus layouts [(regex, allowed layouts)], all-reduces at row layers per forward, expected kind, diagnostics expected)
CONSENSUS = {
    "bert": (MEGATRON_ATTN + MEGATRON_MLP + [(r"norm", REPLICATED)], 2 * 2, "text-encoder", ["divisibility-vocab"]),
    "roberta": (MEGATRON_ATTN + MEGATRON_MLP, 2 * 2, "text-encoder", ["divisibility-vocab"]),
    # GPT-2: q, k, v concatenated in c_attn: a per-segment column split (HF Conv1D [in, out] weights)
    "gpt2": ([(r"\.attn\.c_attn\.weight$", {"column_segments"}), (r"\.attn\.o_proj\.weight$", ROW)] + MEGATRON_MLP, 2 * 2,
             "decoder-lm", ["divisibility-vocab"]),
    # GPT-NeoX: q, k, v interleaved per head in query_key_value: a plain column split keeps whole heads
    "gpt_neox": ([(r"\.attn\.query_key_value\.weight$", {"column", "column_segments"}), (r"\.attn\.o_proj\.weight$", ROW)] + MEGATRON_MLP,
                 2 * 2, "decoder-lm", []),
    "opt": (MEGATRON_ATTN + MEGATRON_MLP, 2 * 2, "decoder-lm", []),
    "llama3": (MEGATRON_ATTN + MEGATRON_MLP, 2 * 2, "decoder-lm", []),
    "mistral": (MEGATRON_ATTN + MEGATRON_MLP, 2 * 2, "decoder-lm", []),
    # Mixtral: router replicated; experts tensor-parallel inside or expert-parallel (both valid)
    "mixtral": (MEGATRON_ATTN + [(r"\.mlp\.gate\.weight$", REPLICATED),
                                 (r"\.mlp\.experts\.(gate_up_proj|down_proj)$", {"column", "row", "expert", "hidden"})], None, "decoder-lm", []),
    # Qwen2-MoE: 60 experts do not divide 8, so tensor parallel inside them; the shared expert is a Megatron pair
    "qwen2_moe": (MEGATRON_ATTN + [(r"\.mlp\.gate\.weight$", REPLICATED), (r"\.shared_expert\.(gate|up)_proj\.weight$", COLUMN),
                                   (r"\.shared_expert\.down_proj\.weight$", ROW)], None, "decoder-lm", ["divisibility-experts"]),
    # Falcon-7B: 71 heads cannot be split over 8 (pad to 72); the MLP is a Megatron pair
    "falcon": (MEGATRON_MLP, None, "decoder-lm", ["divisibility-heads"]),
    "t5": (MEGATRON_ATTN + MEGATRON_MLP + [(r"\.cross\.(q|k|v)_proj\.weight$", COLUMN), (r"\.cross\.o_proj\.weight$", ROW)],
           2 * 2 + 3 * 2, "encoder-decoder", []),
    "whisper": (MEGATRON_ATTN + MEGATRON_MLP + [(r"^conv\d\.weight$", REPLICATED)], 2 * 2 + 3 * 2, "encoder-decoder", ["divisibility-vocab"]),
    "vit": (MEGATRON_ATTN + MEGATRON_MLP + [(r"^patch_embed\.weight$", REPLICATED)], 2 * 2, "vision-encoder", []),
    "dit": (MEGATRON_ATTN + MEGATRON_MLP + [(r"^x_embedder\.weight$", REPLICATED), (r"^t_embedder\.", REPLICATED)], 2 * 2,
            "diffusion-transformer", []),
    # SD-VAE: no spatial split ever (tt-mlir #8216); channels either whole or as conv column -> row pairs (tt-xla video_vae.md)
    "sd_vae": ([(r"^conv_in\.weight$", REPLICATED | COLUMN), (r"^conv_out\.weight$", REPLICATED | ROW)], None, "conv-net", []),
}

# Checks that fail today, each with why (a check's name starts with the key). The test is red when
# any other check fails, and also when one of these passes: then it comes off this list.
KNOWN_GAPS = {
}

results = []


def check(name, condition, detail=""):
    results.append((name, bool(condition)))
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)[:1500]))
    return condition


def plan(name, *flags):
    cmd = [SHARDLENS, "plan", ARCH, "--model", "build(%r)" % name, "--mesh", "1x8", "--format", "json", *flags]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    if p.returncode != 0:
        return None, p.stderr.decode("utf-8", "replace")
    return json.loads(p.stdout), ""


def layouts(mesh):
    return {p["name"]: p["layout"] for p in mesh["parameters"]}


def mismatches(mesh, rules):
    got = layouts(mesh)
    bad = []
    for pattern, allowed in rules:
        matched = [n for n in got if re.search(pattern, n)]
        if not matched:
            bad.append("no parameter matches %s" % pattern)
        bad += ["%s is %s, consensus %s" % (n, got[n], "/".join(sorted(allowed))) for n in matched if got[n] not in allowed]
    return bad


def row_all_reduces(mesh):
    # an all-reduce, or under Megatron SP its reduce-scatter (+ an all-gather later: the same bytes, SHARDING.md §3)
    return sum(c["count"] for c in mesh["collectives"] if c["kind"] in ("all_reduce", "reduce_scatter") and re.search(ROW_AT, c["at"]))


def workload_flags(name):
    kind = CONSENSUS[name][2]
    if kind in ("decoder-lm", "encoder-decoder"):
        return ["--phase", "decode"]  # over the context the model's own position tables allow
    return []  # the kind's own default: one full forward of its natural length


for name, (rules, all_reduces, kind, diagnostics) in CONSENSUS.items():
    if ONLY and name not in ONLY:
        continue
    # Workload per kind, with no --phase.
    default, err = plan(name)
    if not check("%s: plans with its default workload" % name, default, err[-600:]):
        continue
    w = default["workload"]
    check("%s: recognised as %s" % (name, kind), default["model_kind"]["kind"] == kind, default["model_kind"])
    check("%s: the workload is said to be assumed, with why" % name, w.get("assumed") is True and kind in w.get("why", ""), w)
    table = default["model_kind"]["position_table"]
    check("%s: no sequence beyond its position table (%d)" % (name, table), table == 0 or w["seq"] <= table, w)
    if kind in ("decoder-lm", "encoder-decoder"):
        check("%s: decode planned, prefill shown beside it" % name,
              w["phase"] == "decode" and default.get("prefill", {}).get("workload", {}).get("phase") == "prefill", w)
    else:
        check("%s: one full forward (prefill), no KV cache" % name,
              w["phase"] == "prefill" and all(m["totals"]["kv_cache_bytes_per_device"] == 0 for m in default["meshes"]), w)
    for code in diagnostics:
        check("%s: diagnostic %s" % (name, code), any(d["code"] == code for d in default["diagnostics"]),
              [d["code"] for d in default["diagnostics"]])

    # --strategy tensor reproduces the consensus.
    tensor, err = plan(name, "--strategy", "tensor", *workload_flags(name))
    if not check("%s: plans with --strategy tensor" % name, tensor, err[-600:]):
        continue
    tm = tensor["meshes"][0]
    bad = mismatches(tm, rules)
    check("%s --strategy tensor: every consensus layout" % name, not bad, bad)
    if all_reduces is not None:
        check("%s --strategy tensor: Megatron's %d all-reduce at the row-parallel layers" % (name, all_reduces),
              row_all_reduces(tm) == all_reduces, [(c["kind"], c["at"], c["count"]) for c in tm["collectives"]])
        inside = [c for c in tm["collectives"] if re.search(r"\.(q|k|v)_proj$|\.(gate|up)_proj$|c_attn$", c["at"])]
        check("%s --strategy tensor: no collective between a column layer and its row layer" % name, not inside,
              [(c["kind"], c["at"]) for c in inside])

    # auto: agrees, or shows the tensor-parallel plan slower by more than the band.
    auto, err = plan(name, *workload_flags(name))
    if not check("%s: plans with auto" % name, auto, err[-600:]):
        continue
    am = auto["meshes"][0]
    bad = mismatches(am, rules)
    if bad:
        chosen = am["totals"]["est_time_us"]
        tp = [a for a in am["alternatives"] if a["name"] == "tensor parallel (Megatron)" and a["feasible"]]
        margin = tp and (tp[0]["totals"]["est_time_us"] - chosen) > BAND * chosen
        check("%s auto: differs from the consensus (%s) by a margin beyond the error band" % (name, bad[0]), margin,
              [(a["name"], a["why_rejected"]) for a in am["alternatives"]])
    else:
        check("%s auto: agrees with the consensus" % name, True)

def known_gap(name):
    return next((why for key, why in KNOWN_GAPS.items() if name.startswith(key)), None)


passed = sum(ok for _, ok in results)
unexpected = [n for n, ok in results if not ok and known_gap(n) is None]
fixed = [n for n, ok in results if ok and known_gap(n) is not None]
for n, ok in results:
    if not ok and known_gap(n) is not None:
        print("known gap: %s (%s)" % (n, known_gap(n)))
for n in fixed:
    print("FIXED (take it off KNOWN_GAPS): " + n)
print("%d passed, %d failed (%d known gaps, %d unexpected)" % (passed, len(results) - passed, len(results) - passed - len(unexpected), len(unexpected)))
sys.exit(0 if not unexpected and not fixed else 1)
