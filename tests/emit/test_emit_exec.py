#!/usr/bin/env python3
"""Run shardlens' emitted annotation code under real PyTorch and compare it with the plan.

For every script below and the meshes 1x8 and 2x4:
  * `shardlens plan F --emit tt-xla --emit-apply` (the script with the block inserted where the
    editor's code action puts it) must parse, hold the block once and the original lines in order,
    equal `--emit tt-xla` re-indented, and be unchanged when the block is inserted again;
  * executed with torch on the meta device and tests/emit/fake_xla (a recording torch_xla) first
    on sys.path, every parameter `plan --format json` shards must be marked exactly once with its
    spec, and nothing else; the instance form runs until the end of the block (so __main__ code
    after it, such as forward passes, does not run), the function form's apply_sharding(model,
    make_mesh()) is called on the root;
  * the same for `--emit shard-spec`: get_mesh_config(devices) gives the mesh, load_shard_spec(model)
    the {tensor: spec} dict, applied with xs.mark_sharding as the tt-forge-models runner does.

Usage: /usr/bin/python3 tests/emit/test_emit_exec.py --shardlens build/shardlens [NAME ...]
Exit status 0 when every case passes.
"""

import argparse
import builtins
import collections
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
FAKE_XLA = os.path.join(HERE, "fake_xla")
TOOLS = os.path.join(ROOT, "tests", "tools")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
MESHES = ((1, 8), (2, 4))
MARKERS = {
    "tt-xla": ("# >>> shardlens tt-xla sharding >>>", "# <<< shardlens tt-xla sharding <<<"),
    "shard-spec": ("# >>> shardlens load_shard_spec >>>", "# <<< shardlens load_shard_spec <<<"),
}

# (script, extra plan arguments, why it is here)
CASES = [
    (os.path.join(SHARED, "fixtures", "gpt.py"), [], "tied embedding, fused qkv left replicated"),
    (os.path.join(SHARED, "fixtures", "llama.py"), [], "ModuleList built by append"),
    (os.path.join(SHARED, "fixtures", "moe.py"), [], "nested loops over experts"),
    (os.path.join(ROOT, "examples", "mistral_7b.py"), [], "7B on the meta device"),
    (os.path.join(ROOT, "tests", "models", "hf_gpt2.py"), [], "HF Conv1D [in, out] weights"),
    (os.path.join(ROOT, "tests", "models", "nanogpt.py"), [], "instance inside __main__ under a nested if"),
    (os.path.join(ROOT, "tests", "models", "tp_examples_transformer.py"),
     ["--model", "Transformer(ModelArgs(dim=2048, n_heads=16, vocab_size=32000, n_layers=4))"],
     "no instance: apply_sharding(model, mesh)"),
    (os.path.join(ROOT, "tests", "models", "convnext.py"), [], "Sequential stages"),
    (os.path.join(HERE, "odd_names.py"), [], "names that are not attribute paths"),
    (os.path.join(HERE, "shared_blocks.py"), ["--model", "holder.net"],
     "a block registered twice; the model behind an attribute"),
    (os.path.join(SHARED, "fixtures", "tinynet.py"), [], "nothing to shard, no instance"),
]


class Stop(BaseException):
    """Ends the script's execution at the chosen line (BaseException: scripts catch Exception)."""


def is_dotted(expr):
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", expr) is not None


def norm_spec(spec):
    """Plan JSON (null | "axis" | ["a", "b"]) or a Python spec tuple -> list of axis lists."""
    out = []
    for entry in spec:
        if entry is None:
            out.append([])
        elif isinstance(entry, str):
            out.append([entry])
        else:
            out.append(list(entry))
    return out


# --------------------------------------------------------------------------------------------
# worker: executes edited scripts (one process per script, so scripts cannot affect each other)


def run_job(job, torch, MetaMode):
    import numpy as np
    import torch_xla
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr

    rec = torch_xla.RECORD
    rec.reset()
    os.environ.pop("CONVERT_SHLO_TO_SHARDY", None)
    script, kind, expr = job["script"], job["kind"], job["model"]
    rows, cols = job["mesh"]
    instance = is_dotted(expr)
    code = compile(job["text"], script, "exec")
    globs = {"__name__": "__main__", "__file__": script, "__builtins__": builtins}

    def model_bound():
        if not instance:
            return True
        value = globs.get(expr.split(".")[0])
        return isinstance(value, torch.nn.Module)

    if kind == "tt-xla" and instance:
        end_line = job["end_line"]
        stop = lambda frame: frame.f_lineno > end_line  # noqa: E731
    else:
        defined = "apply_sharding" if kind == "tt-xla" else "load_shard_spec"
        stop = lambda frame: defined in globs and model_bound()  # noqa: E731

    def local_trace(frame, event, arg):
        if event == "line" and stop(frame):
            raise Stop()
        return local_trace

    def global_trace(frame, event, arg):
        return local_trace if frame.f_code is code else None

    sys.argv = [script]
    with contextlib.redirect_stdout(sys.stderr), MetaMode():
        sys.settrace(global_trace)
        try:
            exec(code, globs)
        except Stop:
            pass
        finally:
            sys.settrace(None)
        model = eval(expr, globs)
        if kind == "tt-xla" and not instance:
            if globs["apply_sharding"](model, globs["make_mesh"]()) is not model:
                raise AssertionError("apply_sharding did not return the model")
        elif kind == "shard-spec":
            devices = rows * cols
            shape, axes = globs["get_mesh_config"](devices)
            if tuple(shape) != (rows, cols) or tuple(axes) != ("batch", "model"):
                raise AssertionError("get_mesh_config(%d) = %r" % (devices, (shape, axes)))
            try:
                globs["get_mesh_config"](devices * 2)
                raise AssertionError("get_mesh_config accepted %d devices" % (devices * 2))
            except ValueError:
                pass
            specs = globs["load_shard_spec"](model)
            if not isinstance(specs, dict):
                raise AssertionError("load_shard_spec returned %s" % type(specs).__name__)
            os.environ["CONVERT_SHLO_TO_SHARDY"] = "1"
            xr.use_spmd()
            mesh = xs.Mesh(np.array(range(devices)), tuple(shape), tuple(axes))
            for tensor, spec in specs.items():
                xs.mark_sharding(tensor, mesh, spec)

    names = {id(p): n for n, p in model.named_parameters()}
    marks, unknown = [], 0
    for tensor, _mesh, spec in rec.marks:
        if id(tensor) in names:
            marks.append([names[id(tensor)], norm_spec(spec)])
        else:
            unknown += 1
    meshes = [[list(shape), list(axes) if axes else None, ids == list(range(len(ids)))]
              for ids, shape, axes in rec.meshes]
    return {"marks": marks, "unknown": unknown, "meshes": meshes}


def worker():
    jobs = json.load(sys.stdin)
    out = sys.stdout
    sys.path.insert(0, FAKE_XLA)
    sys.path.insert(1, TOOLS)
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
            results.append(run_job(job, torch, MetaMode))
        except BaseException as e:  # noqa: B902 - report every failure of the script
            tb = traceback.extract_tb(e.__traceback__)
            where = ["%s:%d" % (os.path.basename(f.filename), f.lineno) for f in tb[-4:]]
            results.append({"error": "%s: %s (at %s)" % (type(e).__name__, e, " <- ".join(reversed(where)))})
        finally:
            sys.path.pop(0)
    json.dump(results, out)
    return 0


# --------------------------------------------------------------------------------------------
# driver


class CaseFailed(Exception):
    pass


def shardlens(binary, args):
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if p.returncode != 0:
        raise CaseFailed("shardlens %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-800:]))
    return p.stdout


def without_regenerate_line(text):
    return re.sub(r"(?m)^[ \t]*# Regenerate with `.*\n", "", text)


def check_edit(binary, script, extra, mesh_args, kind, original, edited, block, tmpdir):
    """Static checks of the edited text; returns the end marker's line (1-based)."""
    begin, end = MARKERS[kind]
    try:
        compile(edited, script, "exec")
    except SyntaxError as e:
        raise CaseFailed("%s: the edited script does not compile: %s" % (kind, e))
    lines = edited.split("\n")
    begins = [i for i, l in enumerate(lines) if l.strip() == begin]
    ends = [i for i, l in enumerate(lines) if l.strip() == end]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise CaseFailed("%s: expected one block, found %d begin and %d end markers" % (kind, len(begins), len(ends)))
    b, e = begins[0], ends[0]
    indent = lines[b][: len(lines[b]) - len(lines[b].lstrip())]
    inserted = "\n".join(l[len(indent):] if l.startswith(indent) else l for l in lines[b:e + 1]) + "\n"
    if inserted != block:
        raise CaseFailed("%s: the inserted block differs from the printed one" % kind)
    rest = [l for l in lines[:b] + lines[e + 1:] if l.strip()]
    if rest != [l for l in original.split("\n") if l.strip()]:
        raise CaseFailed("%s: the script's own lines changed" % kind)
    # Inserting again replaces the block: nothing changes.
    again_path = os.path.join(tmpdir, os.path.basename(script))
    with open(again_path, "w", encoding="utf-8") as f:
        f.write(edited)
    again = shardlens(binary, ["plan", again_path] + mesh_args + extra + ["--emit", kind, "--emit-apply"])
    if without_regenerate_line(again) != without_regenerate_line(edited):
        raise CaseFailed("%s: inserting the block again changed the script" % kind)
    return e + 1


def check_marks(kind, expected, result):
    if "error" in result:
        raise CaseFailed("%s: running the edited script failed: %s" % (kind, result["error"]))
    problems = []
    counts = collections.Counter(name for name, _ in result["marks"])
    specs = {name: spec for name, spec in result["marks"]}
    for name, spec in expected.items():
        if counts[name] != 1:
            problems.append("%s marked %d times" % (name, counts[name]))
        elif specs[name] != spec:
            problems.append("%s marked %r, plan says %r" % (name, specs[name], spec))
    for name in counts:
        if name not in expected:
            problems.append("%s marked %r but the plan does not shard it" % (name, specs[name]))
    if result["unknown"]:
        problems.append("%d marked tensors are not parameters of the model" % result["unknown"])
    if problems:
        shown = problems[:12] + (["... %d more" % (len(problems) - 12)] if len(problems) > 12 else [])
        raise CaseFailed("%s:\n    %s" % (kind, "\n    ".join(shown)))
    return len(expected)


def run_case(binary, script, extra, tmpdir):
    original = open(script, encoding="utf-8").read()
    model_args = extra[extra.index("--model"):][:2] if "--model" in extra else []
    root = json.loads(shardlens(binary, ["inspect", script, "--format", "json"] + model_args))["root"]
    jobs, checks = [], []
    for rows, cols in MESHES:
        mesh_args = ["--mesh", "%dx%d" % (rows, cols)]
        plan = json.loads(shardlens(binary, ["plan", script] + mesh_args + extra + ["--format", "json"]))
        expected = {p["name"]: norm_spec(p["spec"]) for p in plan["meshes"][0]["parameters"]
                    if p["spec"] and any(p["spec"])}
        for kind in ("tt-xla", "shard-spec"):
            block = shardlens(binary, ["plan", script] + mesh_args + extra + ["--emit", kind])
            edited = shardlens(binary, ["plan", script] + mesh_args + extra + ["--emit", kind, "--emit-apply"])
            end_line = check_edit(binary, script, extra, mesh_args, kind, original, edited, block, tmpdir)
            jobs.append({"script": script, "kind": kind, "model": root, "mesh": [rows, cols],
                         "text": edited, "end_line": end_line})
            checks.append(("%s %dx%d" % (kind, rows, cols), expected))
    p = subprocess.run([PYTHON, os.path.abspath(__file__), "--worker"], input=json.dumps(jobs),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    if p.returncode != 0:
        raise CaseFailed("worker exited %d: %s" % (p.returncode, p.stderr.strip()[-1500:]))
    results = json.loads(p.stdout)
    summary = []
    for (label, expected), result in zip(checks, results):
        n = check_marks(label, expected, result)
        rows_cols = tuple(int(x) for x in label.split()[1].split("x"))
        for shape, axes, ids_ok in result["meshes"]:
            if tuple(shape) != rows_cols or axes != ["batch", "model"] or not ids_ok:
                raise CaseFailed("%s: mesh %r %r" % (label, shape, axes))
        if not result["meshes"] and n:
            raise CaseFailed("%s: parameters marked without a mesh" % label)
        summary.append("%s %d" % (label, n))
    return summary


def check_cli(binary):
    """Bad values: exit status 2 and a message that says so (the framework emitters print a snippet,
    not an edited script, so --emit-apply refuses them)."""
    script = os.path.join(SHARED, "fixtures", "mlp.py")
    for args, words in ((["--emit", "tf"], "must be tt-xla, shard-spec, dtensor, hf-tp-plan or colossalai"),
                        (["--emit", "dtensor", "--emit-apply"], "needs --emit tt-xla|shard-spec"),
                        (["--emit-apply"], "needs --emit")):
        p = subprocess.run([binary, "plan", script] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=60)
        if p.returncode != 2 or words not in p.stderr or p.stdout:
            raise CaseFailed("plan %s: exit %d, stderr %r" % (" ".join(args), p.returncode, p.stderr))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shardlens", help="path to the shardlens binary")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*", help="run only scripts whose file name contains one of these")
    opts = ap.parse_args(argv)
    if opts.worker:
        return worker()
    if not opts.shardlens:
        ap.error("--shardlens is required")
    binary = os.path.abspath(opts.shardlens)
    failed = 0
    try:
        check_cli(binary)
        print("ok shardlens plan --emit: bad values exit 2")
    except CaseFailed as e:
        failed += 1
        print("FAIL shardlens plan --emit: %s" % e)
    cases = [c for c in CASES if not opts.names or any(n in os.path.basename(c[0]) for n in opts.names)]
    with tempfile.TemporaryDirectory() as tmpdir:
        for script, extra, why in cases:
            name = os.path.relpath(script, os.path.dirname(ROOT))
            try:
                summary = run_case(binary, script, extra, tmpdir)
            except (CaseFailed, subprocess.TimeoutExpired) as e:
                failed += 1
                print("FAIL %s (%s): %s" % (name, why, e))
            else:
                print("ok %s (%s): marked %s" % (name, why, ", ".join(summary)))
            sys.stdout.flush()
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
