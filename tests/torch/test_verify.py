#!/usr/bin/env python3
"""Tests of `shardlens verify`, the numeric check of a plan with LibTorch.

Usage:
    /usr/bin/python3 tests/torch/test_verify.py --shardlens build/shardlens

passes   the planner's plans for the fixtures (made for the full-size models, checked on reduced
         configs exported with random weights) hold on meshes 1x2 and 1x4, and the sharded ones
         really were computed sharded (non-zero rounding differences, per-device slices);
         without --plan, verify plans the export itself.
wrong    deliberately wrong plans fail, naming the component: a contiguous column split of GPT's
         fused QKV; a column-parallel layer feeding another column-parallel layer with no
         collective; a norm over a sharded dim without its statistics all-reduce (while the same
         plan with it passes); an all-reduce relabelled all-gather (the kind contradicts its
         layouts: exit 6); a plan with a part the check cannot run is not verified (exit 7).
errors   clear messages and exit codes: a plan without the mesh, a plan of another model, a file
         that is not JSON, a missing model file, a mesh that does not divide.

Prints `ok NAME` / `FAIL NAME: why` per check and closes with `N passed, N failed`.
"""

import argparse
import copy
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_exact_graph as common  # noqa: E402  (Results, run, the helper's batch export)

FIXTURES = common.FIXTURES

# Reduced configs: the full-size plan's layouts must still divide (heads, kv heads, experts, groups
# by 4); names of the layers kept are the same, so the full-size plan applies to them.
REDUCED = {
    "gpt": ("GPT(GPTConfig(n_layer=2, n_head=4, n_embd=64, vocab_size=256, block_size=64))", []),
    "llama": ("Transformer(ModelArgs(dim=64, n_layers=2, n_heads=4, n_kv_heads=4, vocab_size=256, multiple_of=32, max_seq_len=64))", []),
    "moe": ("MoETransformer(MoEArgs(dim=64, hidden_dim=128, n_layers=2, n_heads=8, n_kv_heads=4, num_experts=8, "
            "top_k=2, vocab_size=256))", []),
    "mlp": ("MLP(hidden=64, ff=256)", []),
    "vae_block": ("DecoderStage(channels=(64, 64, 32, 32))", ["--input", "z=1,4,4,4"]),
    "tinynet": ("TinyNet()", []),
    # tests/torch: routed experts that run (expert parallel at 1x2, tensor parallel inside the experts at 1x4).
    "moe_routed": ("MoEStack(MoEArgs(dim=64, hidden_dim=128, n_layers=2, num_experts=8, top_k=2, vocab_size=256))", []),
}
# Plans with other workloads, for more kinds of collectives: prefill splits the routed tokens
# (reduce-scatter of the experts' partial sums, all-gathers before the next consumers).
# GPT in prefill with batch 4 runs data parallel (the token ids cut by batch, gathered before the
# head); Llama mixes it with tensor-parallel FFNs (all-gather before w1, reduce-scatter after w2).
PREFILL = ["--phase", "prefill", "--seq", "4096", "--batch", "4"]
# The VAE stage's tensor-parallel layout is within the cost model's error band of replicated, where
# fewer collectives win: auto replicates it, so its slicing is verified under --strategy tensor.
STRATEGY = {"vae_block": ["--strategy", "tensor"]}
WORKLOADS = {"moe_routed": ["--phase", "prefill", "--seq", "4096", "--batch", "8"], "gpt": PREFILL, "llama": PREFILL}


def script_of(name):
    fixture = os.path.join(FIXTURES, name + ".py")
    return fixture if os.path.exists(fixture) else os.path.join(HERE, name + ".py")
SHARDED = {"gpt", "llama", "moe", "mlp", "vae_block", "moe_routed"}  # fixtures whose full-size plans shard something
# moe.py's SparseMoE unpacks torch.where over [batch, seq, k] routing into two index tensors: its
# forward raises in PyTorch for any 3-D input (static analysis does not run it; verify does).
UNRUNNABLE = {"moe"}


def verify(shardlens, pt, mesh, plan=None, extra=()):
    cmd = [shardlens, "verify", pt, "--mesh", mesh, "--format", "json"] + (["--plan", plan] if plan else []) + list(extra)
    code, out, err = common.run(cmd, timeout=900)
    try:
        report = json.loads(out)
    except ValueError:
        report = None
    return code, report, err


def component(report, name):
    for c in (report or {}).get("components", []):
        if c["module"] == name:
            return c
    return None


def export_reduced(workdir, names):
    jobs = []
    for n in names:
        expr = REDUCED[n][0] if n in REDUCED else None
        script = script_of(n)
        jobs.append({"script": script, "output": os.path.join(workdir, n + ".pt"), "model": expr, "weights": "random"})
    jobs_file = os.path.join(workdir, "jobs.json")
    with open(jobs_file, "w") as f:
        json.dump(jobs, f)
    code, out, err = common.run([common.PYTHON, common.HELPER, "--batch-file", jobs_file], timeout=1200)
    done = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        done[os.path.splitext(os.path.basename(r["script"]))[0]] = r
    return done, err


def full_plan(shardlens, script, workdir, name, meshes=("1x2", "1x4"), extra=()):
    cmd = [shardlens, "plan", script, "--format", "json"] + [a for m in meshes for a in ("--mesh", m)] + list(extra)
    code, out, err = common.run(cmd)
    path = os.path.join(workdir, name + ".plan.json")
    with open(path, "w") as f:
        f.write(out)
    return code, path, err


def mesh_of(plan, shape):
    for m in plan["meshes"]:
        if m["shape"] == shape:
            return m
    raise KeyError(shape)


def write_plan(plan, path):
    with open(path, "w") as f:
        json.dump(plan, f)
    return path


def test_passes(shardlens, res, workdir):
    done, err = export_reduced(workdir, list(REDUCED))
    for name, (expr, extra) in sorted(REDUCED.items()):
        r = done.get(name)
        if not res.check("export %s (reduced, random weights)" % name, r is not None and r.get("ok"),
                         (r or {}).get("error", err[-300:])):
            continue
        pt = os.path.join(workdir, name + ".pt")
        plans = [("", STRATEGY.get(name, []))] + ([(" prefill", WORKLOADS[name])] if name in WORKLOADS else [])
        for what, workload in plans:
            code, plan_path, perr = full_plan(shardlens, script_of(name), workdir, name + what.strip(), extra=workload)
            if res.check("plan %s%s (full size)" % (name, what), code == 0, perr[-300:]):
                # The batch the plan splits must split here too.
                batch = ["--batch", workload[workload.index("--batch") + 1]] if "--batch" in workload else []
                check_fixture(shardlens, res, name + what, pt, plan_path, extra + batch)
    # Without --plan: the planner plans the export itself (a small model plans replicated).
    pt = os.path.join(workdir, "mlp.pt")
    if os.path.exists(pt):
        code, rep, verr = verify(shardlens, pt, "1x2")
        res.check("verify without --plan (plans the export)", code == 0 and rep and rep["ok"], "exit %d %s" % (code, verr[-300:]))


def check_fixture(shardlens, res, label_name, pt, plan_path, extra):
    name = label_name.split()[0]
    if True:
        for mesh in ("1x2", "1x4"):
            code, rep, verr = verify(shardlens, pt, mesh, plan_path, extra)
            label = "verify %s %s" % (label_name, mesh)
            if name in UNRUNNABLE:
                # The fixture's forward fails in PyTorch itself: verify must say so, not pass.
                res.check(label + ": the unsharded forward fails, and verify says so",
                          code == 1 and rep and "the unsharded forward failed" in rep.get("error", ""),
                          "exit %d %s" % (code, json.dumps(rep)[:300]))
                continue
            if not res.check(label + " passes", code == 0 and rep and rep["ok"], "exit %d: %s %s" % (code, json.dumps(rep)[:600], verr[-300:])):
                continue
            statuses = {c["module"]: c["status"] for c in rep["components"]}
            res.check(label + ": every component checked", all(s == "ok" for s in statuses.values()),
                      "%s; not checked: %s" % (statuses, rep.get("not_checked")))
            if name in SHARDED:
                # Sharded for real: devices held slices of the weights, or of the activations (data
                # parallel), and ran the plan's collectives.
                res.check(label + ": computed sharded",
                          (rep.get("sharded_parameters", 0) > 0 or rep.get("slices_run", 0) > 0) and rep.get("collectives_run", 0) > 0,
                          "nothing was sliced or no collective ran: %s" % json.dumps(rep)[:300])


def test_wrong(shardlens, res, workdir):
    done, err = export_reduced(workdir, ["gpt", "norm_between"])
    if not res.check("export for wrong plans", done.get("gpt", {}).get("ok") and done.get("norm_between", {}).get("ok"), err[-300:]):
        return
    gpt_pt = os.path.join(workdir, "gpt.pt")
    code, plan_path, perr = full_plan(shardlens, os.path.join(FIXTURES, "gpt.py"), workdir, "gpt")
    with open(plan_path) as f:
        good = json.load(f)
    for shape, mesh in (([1, 2], "1x2"), ([1, 4], "1x4")):
        # 1. The fused QKV split contiguously (device 0 gets all of q and part of k) instead of per segment.
        plan = copy.deepcopy(good)
        m = mesh_of(plan, shape)
        for p in m["parameters"]:
            if p["name"].endswith("attn.qkv.weight") or p["name"].endswith("attn.qkv.bias"):
                assert p["layout"] == "column_segments", p
                p["layout"] = "column"
                p.pop("segments")
                p["spec"] = ["model", None] if p["name"].endswith("weight") else ["model"]
        code, rep, verr = verify(shardlens, gpt_pt, mesh, write_plan(plan, os.path.join(workdir, "qkv.json")))
        c = component(rep, "h.*")
        res.check("wrong plan fails %s: contiguous split of fused QKV" % mesh,
                  code == 4 and c and c["status"] == "mismatch" and c["max_rel_error"] > 1e-2,
                  "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))
        # 2. Column-parallel up feeding a column-parallel down, no collective between or after.
        plan = copy.deepcopy(good)
        m = mesh_of(plan, shape)
        for p in m["parameters"]:
            if p["name"].endswith("mlp.down.weight"):
                p["layout"], p["spec"] = "column", ["model", None]
            if p["name"].endswith("mlp.down.bias"):
                p["layout"], p["spec"] = "column", ["model"]
        m["collectives"] = [cl for cl in m["collectives"] if cl["at"] != "h.*.mlp.down"]
        code, rep, verr = verify(shardlens, gpt_pt, mesh, write_plan(plan, os.path.join(workdir, "colcol.json")))
        c = component(rep, "h.*")
        res.check("wrong plan fails %s: column feeding column without a collective" % mesh,
                  code == 4 and c and c["status"] == "mismatch", "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))
        # 3. The all-reduce after a row-parallel layer relabelled all-gather: its kind contradicts
        # its own from/to layouts (partial -> replicated), so the plan is refused, not run.
        plan = copy.deepcopy(good)
        m = mesh_of(plan, shape)
        relabelled = [cl for cl in m["collectives"] if cl["kind"] == "all_reduce"]
        relabelled[0]["kind"] = "all_gather"
        code, rep, verr = verify(shardlens, gpt_pt, mesh, write_plan(plan, os.path.join(workdir, "relabel.json")))
        res.check("wrong plan fails %s: an all-reduce relabelled all-gather (exit 6)" % mesh,
                  code == 6 and rep and not rep["ok"] and "contradicts itself" in rep.get("error", "") and
                  "is a all_reduce, not a all_gather" in rep.get("error", ""),
                  "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))
        # 4. A layout the check cannot apply: that block is not checked, so the plan is not
        # reported as verified even though everything that was checked agrees.
        plan = copy.deepcopy(good)
        m = mesh_of(plan, shape)
        for p in m["parameters"]:
            if p["name"] == "h.0.mlp.up.weight":
                p["layout"], p["spec"] = "mystery", None
        code, rep, verr = verify(shardlens, gpt_pt, mesh, write_plan(plan, os.path.join(workdir, "unchecked.json")))
        res.check("a plan with an unchecked part is not verified %s (exit 7)" % mesh,
                  code == 7 and rep and not rep["ok"] and not rep["verified"] and rep["unchecked"] >= 1 and rep["checked_agree"],
                  "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))
        code, out, errtext = common.run([shardlens, "verify", gpt_pt, "--mesh", mesh, "--plan", os.path.join(workdir, "unchecked.json")])
        res.check("its text says NOT VERIFIED %s" % mesh, code == 7 and "NOT VERIFIED" in out and "computes what the unsharded" not in out,
                  out[-400:])
    # Llama in prefill: the residual stream split by batch, FFNs tensor parallel. Without the
    # all-gather before w1 each device's FFN sees only its own rows.
    done, err = export_reduced(workdir, ["llama"])
    llama_pt = os.path.join(workdir, "llama.pt")
    code, plan_path, perr = full_plan(shardlens, script_of("llama"), workdir, "llama_prefill", extra=PREFILL)
    with open(plan_path) as f:
        prefill = json.load(f)
    # Which meshes split the stream by batch is the planner's choice (pure Megatron keeps it whole):
    # each mesh whose plan gathers before w1 is corrupted, and at least one must.
    corrupted = 0
    for shape, mesh in (([1, 2], "1x2"), ([1, 4], "1x4")):
        plan = copy.deepcopy(prefill)
        m = mesh_of(plan, shape)
        before = len(m["collectives"])
        m["collectives"] = [cl for cl in m["collectives"] if not (cl["kind"] == "all_gather" and cl["at"].endswith("feed_forward.w1"))]
        if before == len(m["collectives"]):
            continue
        corrupted += 1
        code, rep, verr = verify(shardlens, llama_pt, mesh, write_plan(plan, os.path.join(workdir, "noag.json")), ["--batch", "4"])
        c = component(rep, "layers.*")
        res.check("wrong plan fails %s: a batch-split stream into a tensor-parallel FFN without its all-gather" % mesh,
                  before == len(m["collectives"]) + 1 and code == 4 and c and c["status"] == "mismatch",
                  "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))
    res.check("the llama prefill plan gathers a batch-split stream before w1 on some mesh", corrupted > 0,
              json.dumps([[c["kind"], c["at"]] for m in prefill["meshes"] for c in m["collectives"]])[:400])
    # 3. A norm over the sharded features: with its statistics all-reduce it holds, without it not.
    nb = os.path.join(HERE, "norm_between.py")
    nb_pt = os.path.join(workdir, "norm_between.pt")
    pins = ["--pin", "up.weight=shard:0", "--pin", "up.bias=shard:0", "--pin", "norm.weight=shard:0",
            "--pin", "norm.bias=shard:0", "--pin", "down.weight=shard:1", "--pins-only"]
    code, plan_path, perr = full_plan(shardlens, nb, workdir, "norm_between", extra=pins)
    with open(plan_path) as f:
        pinned = json.load(f)
    for shape, mesh in (([1, 2], "1x2"), ([1, 4], "1x4")):
        stats = [cl for cl in mesh_of(pinned, shape)["collectives"] if "statistics" in cl["why"]]
        res.check("norm plan %s has a statistics all-reduce" % mesh, len(stats) == 1, json.dumps(mesh_of(pinned, shape)["collectives"])[:400])
        code, rep, verr = verify(shardlens, nb_pt, mesh, plan_path)
        res.check("norm with statistics all-reduce passes %s" % mesh, code == 0 and rep and rep["ok"],
                  "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))
        plan = copy.deepcopy(pinned)
        m = mesh_of(plan, shape)
        m["collectives"] = [cl for cl in m["collectives"] if "statistics" not in cl["why"]]
        code, rep, verr = verify(shardlens, nb_pt, mesh, write_plan(plan, os.path.join(workdir, "nostats.json")))
        c = component(rep, "norm")
        res.check("wrong plan fails %s: norm over a sharded dim without its statistics all-reduce" % mesh,
                  code == 4 and c and c["status"] == "mismatch", "exit %d %s %s" % (code, json.dumps(rep)[:500], verr[-200:]))


def test_errors(shardlens, res, workdir):
    done, err = export_reduced(workdir, ["mlp", "norm_between"])
    mlp_pt = os.path.join(workdir, "mlp.pt")
    code, plan_path, _ = full_plan(shardlens, os.path.join(FIXTURES, "mlp.py"), workdir, "mlp", meshes=("1x2",))
    code, rep, verr = verify(shardlens, mlp_pt, "1x4", plan_path)
    res.check("plan without the mesh: exit 5", code == 5 and rep and "has no mesh 1x4" in rep.get("error", ""),
              "exit %d %s" % (code, json.dumps(rep)[:300]))
    code, other, _ = full_plan(shardlens, os.path.join(FIXTURES, "gpt.py"), workdir, "gpt1x2", meshes=("1x2",))
    code, rep, verr = verify(shardlens, mlp_pt, "1x2", other)
    res.check("plan of another model: exit 5", code == 5 and rep and "does not fit this model" in rep.get("error", ""),
              "exit %d %s" % (code, json.dumps(rep)[:300]))
    bad = os.path.join(workdir, "bad.json")
    with open(bad, "w") as f:
        f.write("{not json")
    code, out, errtext = common.run([shardlens, "verify", mlp_pt, "--mesh", "1x2", "--plan", bad])
    res.check("plan that is not JSON: exit 5", code == 5 and "is not JSON" in errtext, "exit %d %s" % (code, errtext[-300:]))
    code, out, errtext = common.run([shardlens, "verify", os.path.join(workdir, "nope.pt"), "--mesh", "1x2"])
    res.check("missing model file: exit 1", code == 1 and "no such file" in errtext, "exit %d %s" % (code, errtext[-300:]))
    code, out, errtext = common.run([shardlens, "verify", mlp_pt])
    res.check("no --mesh: exit 2", code == 2 and "--mesh" in errtext, "exit %d %s" % (code, errtext[-300:]))
    # fc1 (256 rows) split 3 ways does not divide: the plan does not fit.
    with open(plan_path) as f:
        plan = json.load(f)
    plan["meshes"][0]["shape"] = [1, 3]
    code, rep, verr = verify(shardlens, mlp_pt, "1x3", write_plan(plan, os.path.join(workdir, "odd.json")))
    res.check("a dim that does not divide: exit 5", code == 5 and rep and "does not split" in rep.get("error", ""),
              "exit %d %s" % (code, json.dumps(rep)[:300]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("passes", "wrong", "errors"))
    ap.add_argument("--shardlens", required=True)
    opts = ap.parse_args()
    res = common.Results()
    with tempfile.TemporaryDirectory() as workdir:
        {"passes": test_passes, "wrong": test_wrong, "errors": test_errors}[opts.what](os.path.abspath(opts.shardlens), res, workdir)
    return res.close()


if __name__ == "__main__":
    sys.exit(main())
