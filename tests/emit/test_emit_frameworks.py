#!/usr/bin/env python3
"""Run shardlens' framework emitters (`plan --emit dtensor|hf-tp-plan|colossalai`) and compare
what they set up with the plan.

For every case (script, mesh) the model is built with PyTorch on the meta device (as
tests/tools/torch_ground_truth.py does) and:
  * dtensor: the snippet runs with recording stand-ins for torch.distributed.tensor(.parallel) and
    torch.distributed.device_mesh first in sys.modules (Debian's torch 1.13 has only the prototype
    API); apply_tensor_parallel(model, make_tp_mesh()) must name only modules of
    model.named_modules(), each once, with ColwiseParallel where the plan splits the weight's
    output features (an embedding's hidden dim) and RowwiseParallel where it splits the input
    features (an embedding's vocabulary); every parameter the plan shards is covered, or listed
    in the snippet's "Left out" comment; the mesh has the plan's tensor-parallel size;
  * hf-tp-plan: base_model_tp_plan, its "*" expanded against named_modules() one dotted segment
    at a time (a layer index), must give the same checks and no style dtensor does not give
    ("colwise"/"colwise_rep" = Colwise);
  * colossalai: the snippet runs with a recording colossalai stand-in; its asserts hold,
    HybridParallelPlugin gets tp_size = the plan's tensor-parallel size and pp_size 1; a check
    that fails is a "NOT satisfied" comment (llama on 1x32: 8 KV heads).

Usage: /usr/bin/python3 tests/emit/test_emit_frameworks.py --shardlens build/shardlens [NAME ...]
"""

import argparse
import contextlib
import json
import os
import re
import runpy
import subprocess
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
TOOLS = os.path.join(ROOT, "tests", "tools")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
KINDS = ("dtensor", "hf-tp-plan", "colossalai")
# Scripts whose model is built only under __main__ (or not at all): the class to construct.
ROOT_CLASS = {"odd_names.py": "Odd", "tinynet.py": "TinyNet"}

# (script, extra plan arguments, meshes, snippet text that must appear per kind)
CASES = [
    (os.path.join(SHARED, "fixtures", "mlp.py"), [], ["1x8", "2x4"], {}),
    (os.path.join(SHARED, "fixtures", "gpt.py"), [], ["1x8", "8x4"],
     {"dtensor": "h.*.attn.qkv.weight (column_segments)", "hf-tp-plan": "h.*.attn.qkv.weight (column_segments)"}),
    (os.path.join(SHARED, "fixtures", "llama.py"), [], ["1x8", "2x4"], {"dtensor": "for block in model.layers:"}),
    (os.path.join(SHARED, "fixtures", "llama.py"), [], ["1x32"],
     {"colossalai": "NOT satisfied: kv_heads 8 % 32 != 0", "dtensor": "ColwiseParallel(output_layouts=Replicate())"}),
    (os.path.join(SHARED, "fixtures", "llama.py"), ["--phase", "prefill"], ["1x8"], {}),
    (os.path.join(SHARED, "fixtures", "moe.py"), [], ["1x8", "1x32"], {"hf-tp-plan": "layers.*.moe.experts.*.w1"}),
    (os.path.join(ROOT, "examples", "mistral_7b.py"), [], ["1x8"], {"hf-tp-plan": "\"layers.*.attention.wq\": \"colwise\""}),
    (os.path.join(ROOT, "tests", "models", "hf_llama.py"), [], ["1x8"],
     {"hf-tp-plan": "\"model.layers.*.mlp.gate_proj\": \"colwise\""}),
    (os.path.join(ROOT, "tests", "models", "hf_gpt2.py"), [], ["1x8"], {"dtensor": "(column on Conv1D)"}),
    (os.path.join(ROOT, "tests", "models", "tp_examples_transformer.py"),
     ["--model", "Transformer(ModelArgs(dim=2048, n_heads=16, vocab_size=32000, n_layers=4))"], ["1x8"], {}),
    (os.path.join(HERE, "odd_names.py"), [], ["1x8"], {}),
    (os.path.join(HERE, "shared_blocks.py"), ["--model", "holder.net"], ["1x8"], {}),
    (os.path.join(SHARED, "fixtures", "tinynet.py"), [], ["1x8"], {}),
]


class CaseFailed(Exception):
    pass


# --------------------------------------------------------------------------------------------
# stand-ins


class Recorder:
    def __init__(self):
        self.calls = []  # (module, {key: style})
        self.meshes = []  # (device_type, shape, names)


def install_standins(rec):
    class Placement:
        def __init__(self, *args):
            self.args = args

        def __repr__(self):
            return "%s%r" % (type(self).__name__, self.args)

    class Replicate(Placement):
        pass

    class Shard(Placement):
        pass

    class Style:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class ColwiseParallel(Style):
        pass

    class RowwiseParallel(Style):
        pass

    class SequenceParallel(Style):
        pass

    class PrepareModuleInput(Style):
        pass

    class FakeMesh:
        def __init__(self, shape, names):
            self.shape, self.names = tuple(shape), tuple(names) if names else None

        def size(self):
            n = 1
            for s in self.shape:
                n *= s
            return n

        def __getitem__(self, name):
            i = self.names.index(name)
            return FakeMesh((self.shape[i],), (name,))

    def init_device_mesh(device_type, mesh_shape, mesh_dim_names=None):
        mesh = FakeMesh(mesh_shape, mesh_dim_names)
        rec.meshes.append((device_type, tuple(mesh_shape), mesh_dim_names))
        return mesh

    def parallelize_module(module, device_mesh, parallelize_plan):
        if not isinstance(device_mesh, FakeMesh) or len(device_mesh.shape) != 1:
            raise AssertionError("parallelize_module needs a 1-D mesh, got %r" % (device_mesh,))
        if not isinstance(parallelize_plan, dict):
            raise AssertionError("plan is not a dict")
        for key, style in parallelize_plan.items():
            if not isinstance(style, Style):
                raise AssertionError("%s: %r is not a ParallelStyle" % (key, style))
            rec.calls.append((module.get_submodule(key), type(style).__name__, style.kwargs, device_mesh))
        return module

    tensor = types.ModuleType("torch.distributed.tensor")
    tensor.Replicate, tensor.Shard = Replicate, Shard
    tensor.__path__ = []
    parallel = types.ModuleType("torch.distributed.tensor.parallel")
    for obj in (parallelize_module, ColwiseParallel, RowwiseParallel, SequenceParallel, PrepareModuleInput):
        setattr(parallel, obj.__name__, obj)
    tensor.parallel = parallel
    old = types.ModuleType("torch.distributed._tensor")
    old.Replicate, old.Shard = Replicate, Shard
    device_mesh = types.ModuleType("torch.distributed.device_mesh")
    device_mesh.init_device_mesh = init_device_mesh
    sys.modules.update({"torch.distributed.tensor": tensor, "torch.distributed.tensor.parallel": parallel,
                        "torch.distributed._tensor": old, "torch.distributed.device_mesh": device_mesh})

    colossalai = types.ModuleType("colossalai")
    booster = types.ModuleType("colossalai.booster")
    plugin = types.ModuleType("colossalai.booster.plugin")

    class HybridParallelPlugin:
        def __init__(self, **kwargs):
            rec.plugin = kwargs

    class Booster:
        def __init__(self, plugin=None):
            rec.booster = plugin

    plugin.HybridParallelPlugin = HybridParallelPlugin
    booster.Booster, booster.plugin = Booster, plugin
    colossalai.booster = booster
    colossalai.__path__ = booster.__path__ = []
    sys.modules.update({"colossalai": colossalai, "colossalai.booster": booster, "colossalai.booster.plugin": plugin})


# --------------------------------------------------------------------------------------------
# worker: builds the model and runs the snippets (one process per case)


def segments_match(pattern, name):
    p, n = pattern.split("."), name.split(".")
    return len(p) == len(n) and all(a == "*" and b.isdigit() or a == b for a, b in zip(p, n))


def run_job(job, torch, MetaMode, gt):
    rec = Recorder()
    install_standins(rec)
    out = {}
    script = job["script"]
    sys.argv = [script]
    with contextlib.redirect_stdout(sys.stderr), MetaMode():
        globs = runpy.run_path(script, run_name="__shardlens_gt__")
        model = gt._pick_root(torch, globs, job["model"], job.get("class"))
    modules = {id(m): n for n, m in model.named_modules()}
    classes = {n: type(m).__name__ for n, m in model.named_modules()}
    out["classes"] = classes

    # dtensor
    g = {"__name__": "shardlens_dtensor"}
    exec(compile(job["snippets"]["dtensor"], "dtensor", "exec"), g)
    mesh = g["make_tp_mesh"]()
    if g["apply_tensor_parallel"](model, mesh) is not model:
        raise AssertionError("apply_tensor_parallel did not return the model")
    calls = []
    for module, style, kwargs, m in rec.calls:
        if id(module) not in modules:
            raise AssertionError("a %s outside the model" % style)
        calls.append([modules[id(module)], style, {k: repr(v) for k, v in kwargs.items()}, m.size()])
    out["dtensor"] = {"calls": calls, "mesh": mesh.size(), "meshes": [list(x[1]) for x in rec.meshes]}

    # hf-tp-plan
    g = {"__name__": "shardlens_hf"}
    exec(compile(job["snippets"]["hf-tp-plan"], "hf-tp-plan", "exec"), g)
    plan = g["base_model_tp_plan"]
    expanded = []
    for pattern, style in plan.items():
        names = [n for n in classes if n and segments_match(pattern, n)]
        if not names:
            raise AssertionError("hf-tp-plan: %r matches no module" % pattern)
        expanded += [[n, style] for n in names]
    out["hf"] = expanded

    # colossalai
    g = {"__name__": "shardlens_colossalai"}
    exec(compile(job["snippets"]["colossalai"], "colossalai", "exec"), g)
    out["colossalai"] = {"plugin": rec.plugin, "booster": rec.booster is not None}
    return out


def worker():
    jobs = json.load(sys.stdin)
    sys.path.insert(0, TOOLS)
    import torch
    import torch_ground_truth as gt

    gt._install_rmsnorm(torch)
    gt._patch_init(torch)
    gt._patch_legacy_tensor_ctor(torch)
    MetaMode = gt._build_mode(torch)
    results = []
    for job in jobs:
        sys.path.insert(0, os.path.dirname(job["script"]))
        try:
            results.append(run_job(job, torch, MetaMode, gt))
        except BaseException as e:  # noqa: B902
            tb = traceback.extract_tb(e.__traceback__)
            where = ["%s:%d" % (os.path.basename(f.filename), f.lineno) for f in tb[-4:]]
            results.append({"error": "%s: %s (at %s)" % (type(e).__name__, e, " <- ".join(reversed(where)))})
        finally:
            sys.path.pop(0)
    json.dump(results, sys.stdout)
    return 0


# --------------------------------------------------------------------------------------------
# driver


def shardlens(binary, args):
    p = subprocess.run([binary, "plan"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if p.returncode != 0:
        raise CaseFailed("shardlens plan %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def folded(name):
    return re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", name)


def sharded_dim(spec):
    dims = [i for i, e in enumerate(spec) if e is not None and e != []]
    return dims[0] if dims else None


def tp_size(mesh_plan):
    rows, cols = mesh_plan["shape"]
    for p in mesh_plan["parameters"]:
        if p["spec"]:
            for e in p["spec"]:
                if e:
                    axes = [e] if isinstance(e, str) else e
                    n = 1
                    for a in axes:
                        n *= rows if a == "batch" else cols
                    return n
    return cols


def expected_dim(cls, style):
    """The weight dim a style splits: Linear [out, in], Embedding [vocab, dim]."""
    colwise = style in ("ColwiseParallel", "colwise", "colwise_rep")
    if cls == "Embedding":
        return 1 if colwise else 0
    return 0 if colwise else 1


def check_styles(label, assigned, classes, params, snippet):
    """assigned: [(module, style)]; params: plan parameters by name."""
    seen = set()
    for module, style in assigned:
        if module in seen:
            raise CaseFailed("%s: %s styled twice" % (label, module))
        seen.add(module)
        if style in ("SequenceParallel", "sequence_parallel"):
            continue
        w = params.get(module + ".weight")
        if w is None or not w["spec"]:
            raise CaseFailed("%s: %s (%s) has no sharded weight in the plan" % (label, module, style))
        want = expected_dim(classes[module], style)
        if sharded_dim(w["spec"]) != want:
            raise CaseFailed("%s: %s is %s but the plan's %s weight spec is %r" %
                             (label, module, style, w["layout"], w["spec"]))
    for name, p in params.items():
        owner = name.rsplit(".", 1)[0] if "." in name else ""
        sharded = p["spec"] is not None and sharded_dim(p["spec"]) is not None
        unwritable = p["spec"] is None and p["layout"] != "replicated"
        if (sharded or unwritable) and owner not in seen and folded(name) + " (" not in snippet:
            raise CaseFailed("%s: %s (%s) neither covered nor listed as left out" % (label, name, p["layout"]))
        if unwritable and owner in seen:
            raise CaseFailed("%s: %s (%s) has no style but %s got one" % (label, name, p["layout"], owner))


def run_case(binary, script, extra, mesh, musts):
    base = [script, "--mesh", mesh] + extra
    plan = json.loads(shardlens(binary, base + ["--format", "json"]))
    mp = plan["meshes"][0]
    params = {p["name"]: p for p in mp["parameters"]}
    snippets = {k: shardlens(binary, base + ["--emit", k]) for k in KINDS}
    for kind, text in musts.items():
        if text not in snippets[kind]:
            raise CaseFailed("--emit %s lacks %r:\n%s" % (kind, text, snippets[kind]))
    model = extra[extra.index("--model") + 1] if "--model" in extra else None
    job = {"script": script, "model": model, "class": ROOT_CLASS.get(os.path.basename(script)), "snippets": snippets}
    p = subprocess.run([PYTHON, os.path.abspath(__file__), "--worker"], input=json.dumps([job]),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    if p.returncode != 0:
        raise CaseFailed("worker exit %d: %s" % (p.returncode, p.stderr[-2000:]))
    res = json.loads(p.stdout)[0]
    if "error" in res:
        raise CaseFailed(res["error"])
    classes = res["classes"]
    tp = tp_size(mp)

    d = res["dtensor"]
    if d["mesh"] != tp or any(c[3] != tp for c in d["calls"]):
        raise CaseFailed("dtensor: tensor-parallel mesh of %d devices, the plan splits over %d" % (d["mesh"], tp))
    dt = [(m, s) for m, s, _, _ in d["calls"]]
    check_styles("dtensor", dt, classes, params, snippets["dtensor"])

    hf = [(m, s) for m, s in res["hf"]]
    check_styles("hf-tp-plan", hf, classes, params, snippets["hf-tp-plan"])
    norm = {"ColwiseParallel": "colwise", "RowwiseParallel": "rowwise", "SequenceParallel": "sequence_parallel",
            "colwise_rep": "colwise"}
    # hf-tp-plan styles a subset of dtensor's modules the same way (a layout that differs between
    # layers has no transformers key; check_styles saw it listed as left out).
    extra = set((m, norm.get(s, s)) for m, s in hf) - set((m, norm.get(s, s)) for m, s in dt)
    if extra:
        raise CaseFailed("hf-tp-plan styles differ from dtensor's: %s" % sorted(extra)[:4])

    c = res["colossalai"]["plugin"]
    if c.get("tp_size") != tp or c.get("pp_size") != 1:
        raise CaseFailed("colossalai: %r, the plan splits over %d" % (c, tp))
    return "%d modules styled, tp %d" % (len(dt), tp)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shardlens")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*")
    opts = ap.parse_args(argv)
    if opts.worker:
        return worker()
    if not opts.shardlens:
        ap.error("--shardlens is required")
    binary = os.path.abspath(opts.shardlens)
    failed = 0
    for script, extra, meshes, musts in CASES:
        if opts.names and not any(n in os.path.basename(script) for n in opts.names):
            continue
        for mesh in meshes:
            label = "%s %s %s" % (os.path.basename(script), mesh, " ".join(extra))
            try:
                print("ok %s: %s" % (label, run_case(binary, script, extra, mesh, musts if mesh == meshes[0] else {})))
            except CaseFailed as e:
                failed += 1
                print("FAIL %s: %s" % (label, e))
            sys.stdout.flush()
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
