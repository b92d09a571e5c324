#!/usr/bin/env python3
"""A pipeline of models shares one mesh shape (issue 37, item 1): a T5-style text encoder, a DiT and
a VAE decoder (tests/models/pipeline/) planned on every shape of 8 and of 32 devices.

The rule checked, from the table shardlens prints and independently of how it chose: the slowest
model is the one whose best time per request (over the shapes it can run under) is largest; the
shape is the fastest for it when every model runs there, else the fastest for it among the shapes
every model supports (a fallback). Heads that do not divide a shape's model axis make a model
unable to run under it (tt-mlir has no uneven sharding).

Usage: test_pipeline.py PATH/TO/shardlens
"""
import json
import os
import subprocess
import sys
import tempfile

SHARDLENS = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(HERE), "models", "pipeline")
ENCODER, DIT, VAE = (os.path.join(MODELS, f) for f in ("text_encoder.py", "dit.py", "vae_decoder.py"))
results = []


def check(name, condition, detail=""):
    results.append(condition)
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)[:2000]))


def run(*args):
    p = subprocess.run([SHARDLENS, "plan", *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def plan_json(*args):
    code, out, err = run(*args, "--format", "json")
    if code != 0:
        check("plan " + " ".join(args) + " exits 0", False, err)
        return None
    return json.loads(out)


def expected_choice(pipe):
    """The shape the rule picks, recomputed from the table: (shape, fallback, slowest file)."""
    shapes = [tuple(s) for s in pipe["candidates"]]
    rows = {(r["file"], tuple(r["shape"])): r for r in pipe["table"]}
    files = list(dict.fromkeys(r["file"] for r in pipe["table"]))

    def best(file, among):
        ok = [s for s in among if rows[(file, s)]["per_request_us"] > 0]
        return min(ok, key=lambda s: (rows[(file, s)]["per_request_us"], shapes.index(s))) if ok else None

    slowest, slowest_us, best_shape = None, -1, None
    for f in files:
        runnable = [s for s in shapes if rows[(f, s)]["feasible"]]
        b = best(f, runnable or shapes)
        if b is not None and rows[(f, b)]["per_request_us"] > slowest_us:
            slowest, slowest_us, best_shape = f, rows[(f, b)]["per_request_us"], b
    every = [s for s in shapes if all(rows[(f, s)]["feasible"] for f in files)]
    if best_shape in every:
        return best_shape, False, slowest
    if every:
        return best(slowest, every), True, slowest
    return None, True, slowest


def check_pipeline(label, j, devices, files):
    pipe = j["pipeline"]
    check(f"{label}: {devices} devices", pipe["devices"] == devices, pipe["devices"])
    shapes = [tuple(s) for s in pipe["candidates"]]
    check(f"{label}: every candidate has {devices} devices", all(r * c == devices for r, c in shapes), shapes)
    check(f"{label}: a table row per model and shape", len(pipe["table"]) == len(files) * len(shapes), len(pipe["table"]))
    check(f"{label}: one plan per model, on the chosen shape",
          [m["file"] for m in j["models"]] == files and all(len(m["meshes"]) == 1 and m["meshes"][0]["shape"] == pipe["shape"] for m in j["models"]),
          [(m["file"], [x["shape"] for x in m["meshes"]]) for m in j["models"]])
    for r in pipe["table"]:
        if abs(r["per_request_us"] - r["est_time_us"] * r["runs"]) > 1e-6 * max(1, r["per_request_us"]):
            check(f"{label}: time per request = estimate x runs", False, r)
            break
    shape, fallback, slowest = expected_choice(pipe)
    check(f"{label}: the slowest model is {os.path.basename(slowest)}", pipe["slowest"] == slowest, pipe["slowest"])
    if shape is not None:
        check(f"{label}: the shape is the rule's {shape}", tuple(pipe["shape"]) == shape, (pipe["shape"], pipe["why"]))
    check(f"{label}: fallback is {fallback}", pipe["fallback"] == fallback, pipe["why"])
    return pipe


# Three models on a T3K's 8 chips: 1x8, 2x4, 4x2; the DiT runs 50 denoising steps per request.
files = [ENCODER, DIT, VAE]
j = plan_json(*files, "--devices", "8")
if j:
    pipe = check_pipeline("8 devices", j, 8, files)
    check("8 devices: the shapes are 1x8 (the usual one, first), 2x4 and 4x2",
          [tuple(s) for s in pipe["candidates"]] == [(1, 8), (2, 4), (4, 2)], pipe["candidates"])
    dit_rows = [r for r in pipe["table"] if r["file"] == DIT]
    check("8 devices: a DiT request is 50 forwards", all(r["runs"] == 50 for r in dit_rows), dit_rows)
    check("8 devices: every model runs under every shape (32, 16 and 16 heads... all divide 8)",
          all(r["feasible"] for r in pipe["table"]), [r for r in pipe["table"] if not r["feasible"]])
    check("8 devices: the DiT is the slowest (50 steps)", pipe["slowest"] == DIT, pipe["slowest"])
    check("8 devices: no fallback", pipe["fallback"] is False, pipe["why"])

# The encoder with 12 heads: 12 does not divide 8, so it cannot run under 1x8; it divides 4 and 2.
# The VAE decoder made the slowest (1000 decodes per request): its convolutions split over 8
# columns are fastest on 1x8, where the encoder cannot run, so the pipeline falls back.
twelve = [ENCODER, "--model", "TextEncoder(heads=12)", DIT, VAE, "--runs", "1000"]
j = plan_json(*twelve, "--devices", "8")
if j:
    pipe = check_pipeline("12-head encoder, 8 devices", j, 8, files)
    rows = {(r["file"], tuple(r["shape"])): r for r in pipe["table"]}
    check("12-head encoder cannot run under 1x8, says why",
          not rows[(ENCODER, (1, 8))]["feasible"] and "12 attention heads" in rows[(ENCODER, (1, 8))]["why"]
          and "model axis (8)" in rows[(ENCODER, (1, 8))]["why"], rows[(ENCODER, (1, 8))])
    check("12-head encoder runs under 2x4 and 4x2", rows[(ENCODER, (2, 4))]["feasible"] and rows[(ENCODER, (4, 2))]["feasible"],
          [rows[(ENCODER, (2, 4))], rows[(ENCODER, (4, 2))]])
    check("12-head encoder, VAE slowest: it is best on 1x8, where the encoder cannot run: falls back to a shape both run under",
          pipe["slowest"] == VAE and pipe["fallback"] and tuple(pipe["best_for_slowest"]) == (1, 8) and tuple(pipe["shape"]) != (1, 8)
          and "not every model runs under it" in pipe["why"], pipe["why"])
    code, out, err = run(*twelve, "--devices", "8")
    check("text: the table, the footnote and the fallback are printed",
          code == 0 and "cannot run:" in out and "12 attention heads" in out and ("(fallback)" in out) == pipe["fallback"], out[:3000])

# 32 devices (Galaxy): 8x4 first, then every factorisation with at least two columns.
j = plan_json(*twelve, "--devices", "32")
if j:
    pipe = check_pipeline("12-head encoder, 32 devices", j, 32, files)
    shapes = [tuple(s) for s in pipe["candidates"]]
    check("32 devices: 8x4 first; 4x8, 1x32, 2x16, 16x2 among the candidates",
          shapes[0] == (8, 4) and {(4, 8), (1, 32), (2, 16), (16, 2)} <= set(shapes), shapes)
    rows = {(r["file"], tuple(r["shape"])): r for r in pipe["table"]}
    chosen = tuple(pipe["shape"])
    check("32 devices: every model runs under the chosen shape", all(rows[(f, chosen)]["feasible"] for f in files), pipe["why"])

# No shape runs every model: 7 heads divide none of 8, 4 and 2.
j = plan_json(ENCODER, "--model", "TextEncoder(heads=7)", DIT, VAE, "--devices", "8")
if j:
    pipe = j["pipeline"]
    check("7-head encoder: no shape runs every model, said", pipe["every_model_runs"] is False and "no candidate shape runs every model" in pipe["why"],
          pipe["why"])

# The meshes given instead of a device count: those are the candidates.
j = plan_json(*files, "--mesh", "2x4", "--mesh", "t3k")
if j:
    check("--mesh: the candidates are the meshes given", [tuple(s) for s in j["pipeline"]["candidates"]] == [(2, 4), (1, 8)],
          j["pipeline"]["candidates"])

# One FILE with --devices: its shape chosen alone.
j = plan_json(ENCODER, "--model", "TextEncoder(heads=12)", "--devices", "8")
if j:
    check("one FILE with --devices: a shape its 12 heads divide", tuple(j["pipeline"]["shape"]) in {(2, 4), (4, 2)}, j["pipeline"])

# pyproject.toml: [[tool.shardlens.pipeline]] tables, files relative to it, runs given.
with tempfile.TemporaryDirectory() as tmp:
    toml = os.path.join(tmp, "pyproject.toml")
    rel = lambda p: os.path.relpath(p, tmp)
    with open(toml, "w") as f:
        f.write(f'[tool.shardlens]\nmeshes = ["t3k"]\n\n'
                f'[[tool.shardlens.pipeline]]\nfile = "{rel(ENCODER)}"\nmodel = "TextEncoder(heads=12)"\n\n'
                f'[[tool.shardlens.pipeline]]\nfile = "{rel(DIT)}"\nruns = 20  # denoising steps\n\n'
                f'[[tool.shardlens.pipeline]]\nfile = "{rel(VAE)}"\n')
    j = plan_json("--pipeline", toml, "--devices", "8")
    if j:
        pipe = check_pipeline("pyproject pipeline", j, 8, [os.path.normpath(p) for p in files])
        check("pyproject pipeline: runs = 20 is read", all(r["runs"] == 20 for r in pipe["table"] if r["file"] == os.path.normpath(DIT)), pipe["table"])
        check("pyproject pipeline: the model expression is read",
              any(not r["feasible"] and "12 attention heads" in r["why"] for r in pipe["table"]), pipe["table"])
    with open(toml, "w") as f:
        f.write('[tool.shardlens]\nmeshes = ["t3k"]\n')
    code, out, err = run("--pipeline", toml)
    check("a pyproject.toml without a pipeline: exit 1, says what to write", code == 1 and "[[tool.shardlens.pipeline]]" in err, err)

# Pipeline parallelism (issue 37, item 2): a 126-layer dense decoder on Galaxy, prefill batch 32.
ROOT = os.path.dirname(os.path.dirname(HERE))
DENSE = os.path.join(ROOT, "bench", "models", "dense_405b.py")
j = plan_json(DENSE, "--mesh", "galaxy", "--phase", "prefill", "--batch", "32")
if j:
    alts = [a for a in j["meshes"][0]["alternatives"] if "pipeline" in a["name"]]
    check("126 layers on 8x4: a pipeline option is costed", len(alts) == 1 and alts[0]["feasible"], alts)
    if alts:
        a = alts[0]
        p, m = a["stages"], a["microbatches"]
        check("pipeline: 8 stages over the 8 rows, 32 microbatches (one per sequence)", (p, m) == (8, 32), (p, m))
        check("pipeline: bubble (p-1)/(m+p-1) = 7/39", abs(a["bubble_fraction"] - 7 / 39) < 1e-12, a["bubble_fraction"])
        check("pipeline: every one of the 126 blocks in one stage, stages balanced within a block or two",
              sum(a["blocks_per_stage"]) == 126 and len(a["blocks_per_stage"]) == 8 and max(a["blocks_per_stage"]) - min(a["blocks_per_stage"]) <= 2,
              a["blocks_per_stage"])
        check("pipeline: stage spans from the embedding to the output", len(a["stage_spans"]) == 8 and a["stage_spans"][0].startswith("tok_embeddings")
              and a["stage_spans"][-1].endswith("output"), a["stage_spans"])
        check("pipeline: the bubble is in its reason", "bubble" in a["why_rejected"] and "18%" in a["why_rejected"], a["why_rejected"])
        check("pipeline: point-to-point sends counted: m x (p-1) beyond the stages' own collectives",
              a["totals"]["collectives"] >= m * (p - 1), a["totals"])

# Batch-1 decode: one microbatch, the stages never overlap, and the reason says so.
j = plan_json(DIT, "--mesh", "t3k")
if j:
    alts = [a for a in j["meshes"][0]["alternatives"] if "pipeline" in a["name"]]
    check("batch 1: the pipeline option has 1 microbatch and a bubble of 7/8, and says why it loses",
          len(alts) == 1 and alts[0]["microbatches"] == 1 and abs(alts[0]["bubble_fraction"] - 7 / 8) < 1e-12
          and "a batch of 1 is one microbatch" in alts[0]["why_rejected"], alts)

# --emit colossalai writes the stages; the report draws them.
code, out, err = run(DENSE, "--mesh", "galaxy", "--phase", "prefill", "--batch", "32", "--emit", "colossalai")
layers = [l for l in out.splitlines() if l.startswith("LAYERS_PER_STAGE = [")]
check("colossalai: PP_SIZE, NUM_MICROBATCHES and LAYERS_PER_STAGE (126 blocks) are written",
      code == 0 and "PP_SIZE = 8" in out and "NUM_MICROBATCHES = 32" in out and layers and
      sum(int(x) for x in layers[0].split("[")[1].split("]")[0].split(",")) == 126, out[-2500:])
p = subprocess.run([SHARDLENS, "report", DENSE, "--mesh", "galaxy", "--phase", "prefill", "--batch", "32", "-o", "-"],
                   capture_output=True, text=True, timeout=300)
check("report: the pipeline option's stages as a picture", p.returncode == 0 and "Pipeline option on 8x4: 8 stages" in p.stdout
      and "stage 7" in p.stdout, p.stderr[-1000:])

# The pipeline's report: the shared shape and its table, each model's report on it beside.
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run([SHARDLENS, "report", *twelve, "--devices", "8", "-o", tmp], capture_output=True, text=True, timeout=300)
    main = os.path.join(tmp, "sharding_analysis.md")
    text = open(main).read() if os.path.exists(main) else ""
    j = plan_json(*twelve, "--devices", "8")
    shape = "x".join(map(str, j["pipeline"]["shape"])) if j else "?"
    check("report: the pipeline's file holds the table and the choice", p.returncode == 0 and "## One mesh shape for the pipeline" in text
          and f"**Chosen: {shape} (fallback).**" in text and "cannot run:" in text, p.stderr + text[:2000])
    for stem in ("text_encoder", "dit", "vae_decoder"):
        path = os.path.join(tmp, f"sharding_analysis.{stem}.md")
        body = open(path).read() if os.path.exists(path) else ""
        check(f"report: {stem}'s own report, linked, planned on {shape}", f"](sharding_analysis.{stem}.md)" in text and
              f"--mesh {shape}" in body and os.path.exists(os.path.join(tmp, f"sharding_analysis.{stem}.ccl_bytes.svg")), body[:500])

# Bad input.
code, out, err = run(DIT, "--runs", "0", VAE)
check("--runs 0 is refused", code == 2 and "--runs" in err, err)
code, out, err = run("--runs", "3", DIT)
check("--runs before any FILE is refused", code == 2 and "--runs" in err, err)
code, out, err = run(DIT, VAE, "--emit", "tt-xla")
check("--emit with a pipeline is refused", code == 2 and "--emit" in err, err)
code, out, err = run(DIT, VAE, "--devices", "8", "--mesh", "1x8")
check("--devices with --mesh is refused", code == 2 and "not both" in err, err)
code, out, err = run(DIT, "--runs", "5")
check("--runs without a pipeline is refused", code == 2 and "--runs" in err, err)

print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
