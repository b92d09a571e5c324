#!/usr/bin/env python3
"""Tests of the exact graph: `shardlens export` (the Python helper), `shardlens-graph` (LibTorch)
and `shardlens plan --graph`.

Usage:
    /usr/bin/python3 tests/torch/test_exact_graph.py roundtrip|plans|errors --shardlens build/shardlens

roundtrip  export -> graph gives exactly named_parameters() (names, order, shapes) and the module
           tree, for every fixture in ../shared/fixtures, the bundled example, tests/torch and a
           sample of tests/models: compared with what PyTorch built at export time (the archive's
           metadata) and with `shardlens inspect --format json` (itself checked against PyTorch by
           the ground-truth tests); the forward graph evaluates without unknown shapes.
plans      plans from the exact graph agree with the static ones for the fixtures (layouts,
           collectives, estimate within 5%, no static-blind report) on three meshes; on the three
           scripts of tests/torch only the exact graph gets the Megatron plan right.
errors     the helper's failure modes: exit codes and messages.

Prints `ok NAME` / `FAIL NAME: why` per check and closes with `N passed, N failed`.
Exit status 0 when everything passed.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.environ.get("SHARDLENS_FIXTURES", os.path.join(ROOT, "..", "shared", "fixtures"))
HELPER = os.path.join(ROOT, "analysis", "torch", "export_helper.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# A sample of tests/models that exports (scripted and traced), kept small: each costs an export and
# a LibTorch load.
MODEL_SAMPLE = ["hf_llama", "hf_gpt2", "hf_qwen2", "mixtral_moe", "timm_vit", "torchvision_resnet",
                "lang_weight_tying", "mamba"]
TORCH_TESTS = ["dispatch_attention", "helper_import", "runtime_registry"]
# Of those, the ones the static front end now gets right too (a helper module beside the script; a
# layer chosen by a name read from a JSON config).
STATIC_SEES = {"helper_import", "runtime_registry"}


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, why=""):
        if ok:
            self.passed += 1
            print("ok %s" % name)
        else:
            self.failed += 1
            print("FAIL %s: %s" % (name, why))
        sys.stdout.flush()
        return ok

    def close(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 else 1


def run(cmd, env=None, timeout=600):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def directives(path):
    """--model EXPR from `# shardlens-test:` lines (the ground-truth tests' directives)."""
    model = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if not s.startswith("#"):
                break
            body = s.lstrip("#").strip()
            if body.startswith("shardlens-test:"):
                words = shlex.split(body[len("shardlens-test:"):])
                for i, w in enumerate(words):
                    if w == "--model" and i + 1 < len(words):
                        model = words[i + 1]
    return model


def metadata(pt):
    with zipfile.ZipFile(pt) as z:
        for n in z.namelist():
            if n.endswith("/extra/shardlens.json"):
                return json.loads(z.read(n))
    return None


def export_batch(scripts, outdir):
    """Exports every script in one Python process (the helper's batch mode): {script: result}."""
    jobs = []
    for s in scripts:
        out = os.path.join(outdir, os.path.splitext(os.path.basename(s))[0] + ".pt")
        jobs.append({"script": s, "output": out, "model": directives(s)})
    jobs_file = os.path.join(outdir, "jobs.json")
    with open(jobs_file, "w") as f:
        json.dump(jobs, f)
    code, out, err = run([PYTHON, HELPER, "--batch-file", jobs_file], timeout=1200)
    results = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        results[r["script"]] = r
    return results, err


def shapes(entries):
    return [(e["name"], list(e["shape"]) if e.get("shape") is not None else None) for e in entries]


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "at %d: %r vs %r" % (i, x, y)
    if len(a) != len(b):
        return "lengths %d vs %d" % (len(a), len(b))
    return ""


# ------------------------------------------------------------------------------------------------


def test_roundtrip(shardlens, res, workdir):
    scripts = sorted(os.path.join(FIXTURES, f) for f in os.listdir(FIXTURES) if f.endswith(".py"))
    scripts.append(os.path.join(ROOT, "examples", "mistral_7b.py"))
    scripts += [os.path.join(HERE, n + ".py") for n in TORCH_TESTS]
    scripts += [os.path.join(ROOT, "tests", "models", n + ".py") for n in MODEL_SAMPLE]
    exported, err = export_batch(scripts, workdir)
    for s in scripts:
        name = os.path.relpath(s, os.path.dirname(ROOT)) if s.startswith(FIXTURES) else os.path.relpath(s, ROOT)
        r = exported.get(s)
        if not res.check("export %s" % name, r is not None and r.get("ok"), (r or {}).get("message", err[-400:])):
            continue
        pt = r["output"]
        meta = metadata(pt)
        code, out, gerr = run([shardlens, "graph", pt, "--format", "json", "--no-cache"])
        if not res.check("graph %s" % name, code == 0, "exit %d: %s" % (code, gerr.strip()[-300:])):
            continue
        g = json.loads(out)
        # named_parameters() exactly as PyTorch gave it at export time.
        want = shapes(meta["parameters"])
        got = shapes(g["parameters"])
        res.check("named_parameters %s (%d, %s)" % (name, len(got), r["method"]), got == want, first_difference(got, want))
        want_modules = [(m["name"], m["class"]) for m in meta["modules"] if m["name"]]
        got_modules = [(m["name"], m["class"]) for m in g["modules"]]
        res.check("named_modules %s" % name, got_modules == want_modules, first_difference(got_modules, want_modules))
        want_buffers = shapes(meta["buffers"])
        res.check("named_buffers %s" % name, shapes(g["buffers"]) == want_buffers,
                  first_difference(shapes(g["buffers"]), want_buffers))
        # The same as the static front end's (verified against PyTorch by the ground-truth tests),
        # except where the static analysis is blind by design (tests/torch/runtime_registry.py).
        if os.path.basename(s) != "runtime_registry.py":
            cmd = [shardlens, "inspect", s, "--format", "json"]
            if directives(s):
                cmd += ["--model", directives(s)]
            code, out, ierr = run(cmd)
            if code == 0:
                static = shapes(json.loads(out)["parameters"])
                res.check("inspect agrees %s" % name, static == got, first_difference(static, got))
        # Spans from the script for every parameter and module.
        res.check("spans %s" % name, all(p.get("span") and p["span"]["line"] >= 1 for p in g["parameters"]),
                  "a parameter without a span")
        graph = g.get("graph", {})
        ops = graph.get("ops", [])
        if "forward" in graph.get("error", ""):
            continue  # a tree-only script (no forward): nothing more to check
        bad = [o for o in ops if "error" in o]
        res.check("forward evaluated %s (%d ops)" % (name, len(ops)),
                  ops and not graph.get("error") and not bad,
                  graph.get("error") or "%d ops without shapes, first %s: %s" % (
                      len(bad), bad[0]["kind"] if bad else "", bad[0].get("error", "") if bad else ""))


# ------------------------------------------------------------------------------------------------


def plan(shardlens, script, pt=None, meshes=("t3k",), extra=()):
    cmd = [shardlens, "plan", script, "--format", "json"]
    for m in meshes:
        cmd += ["--mesh", m]
    if pt:
        cmd += ["--graph", pt]
    cmd += list(extra)
    code, out, err = run(cmd)
    if code != 0:
        raise RuntimeError("plan exited %d: %s" % (code, err.strip()[-300:]))
    return json.loads(out)


def summary(mesh):
    layouts = {p["name"]: (p["layout"], json.dumps(p["spec"])) for p in mesh["parameters"]}
    ccls = sorted((c["kind"], c["axis"], c["count"], c["at"]) for c in mesh["collectives"])
    return layouts, ccls


def test_plans(shardlens, res, workdir):
    fixtures = sorted(os.path.join(FIXTURES, f) for f in os.listdir(FIXTURES) if f.endswith(".py"))
    exported, err = export_batch(fixtures, workdir)
    meshes = ("t3k", "n300", "galaxy")
    for s in fixtures:
        name = os.path.basename(s)
        r = exported.get(s)
        if not res.check("export %s" % name, r is not None and r.get("ok"), (r or {}).get("message", err[-300:])):
            continue
        try:
            static = plan(shardlens, s, meshes=meshes)
            exact = plan(shardlens, s, r["output"], meshes=meshes)
        except RuntimeError as e:
            res.check("plan %s" % name, False, str(e))
            continue
        for ms, me in zip(static["meshes"], exact["meshes"]):
            shape = "x".join(str(d) for d in ms["shape"])
            ls, cs = summary(ms)
            le, ce = summary(me)
            diff = sorted(k for k in set(ls) | set(le) if ls.get(k) != le.get(k))
            res.check("layouts agree %s %s" % (name, shape), not diff,
                      "; ".join("%s: static %s, exact %s" % (k, ls.get(k), le.get(k)) for k in diff[:3]))
            res.check("collectives agree %s %s" % (name, shape), cs == ce, "static %s, exact %s" % (cs, ce))
            ts, te = ms["totals"]["est_time_us"], me["totals"]["est_time_us"]
            res.check("estimate agrees %s %s (%.1f vs %.1f us)" % (name, shape, ts, te),
                      abs(ts - te) <= 0.05 * max(ts, te, 1e-9), "more than 5% apart")
        blind = [d["message"] for d in exact["diagnostics"] if d["code"] == "static-blind"]
        res.check("no static-blind report %s" % name, not blind, "; ".join(blind[:3]))
        res.check("exact plan says so %s" % name, any("exact graph" in n for n in exact["notes"]), "no note")
    # Llama on 32 devices: the KV-head diagnostic comes from the exact graph too.
    llama = os.path.join(FIXTURES, "llama.py")
    if exported.get(llama, {}).get("ok"):
        exact = plan(shardlens, llama, exported[llama]["output"], meshes=("1x32",))
        res.check("kv-head diagnostic from the exact graph (llama 1x32)",
                  any(d["code"] == "divisibility-kv-heads" for d in exact["diagnostics"]),
                  str([d["code"] for d in exact["diagnostics"]]))

    # Where only the exact graph gets it right: through `shardlens export` itself.
    expect = {
        # module-name pattern -> layout
        "dispatch_attention": {"column": ("wq", "wk", "wv", "w1", "w3", "output"), "row": ("wo", "w2")},
        "helper_import": {"column": ("wq", "wk", "wv", "w1", "w3", "output"), "row": ("wo", "w2")},
        "runtime_registry": {"column": ("gate_proj", "up_proj", "head"), "column_segments": ("attn",),
                             "row": ("proj", "down_proj")},
    }
    for n in TORCH_TESTS:
        s = os.path.join(HERE, n + ".py")
        pt = os.path.join(workdir, n + ".pt")
        code, out, err = run([shardlens, "export", s, "-o", pt])
        if not res.check("shardlens export %s" % n, code == 0, "exit %d: %s" % (code, err.strip()[-300:])):
            continue
        exact = plan(shardlens, s, pt)
        static = plan(shardlens, s)
        le, ce = summary(exact["meshes"][0])
        ls, cs = summary(static["meshes"][0])
        wrong = []
        for layout, names in expect[n].items():
            for pname, (got, _) in le.items():
                leaf = pname.rsplit(".", 2)[-2] if pname.count(".") >= 1 else pname
                if leaf in names and got != layout:
                    wrong.append("%s is %s, not %s" % (pname, got, layout))
        res.check("exact plan is Megatron's %s" % n, not wrong, "; ".join(wrong[:4]))
        reduces = sum(c[2] for c in ce if c[0] == "all_reduce")
        res.check("exact plan: 2 all-reduce per block %s" % n, reduces == 4, "%d all-reduce: %s" % (reduces, ce))
        if n in STATIC_SEES:
            # Once blind spots of the static front end; it follows imports and reads config files now.
            res.check("static plan matches the exact one %s" % n, (ls, cs) == (le, ce),
                      "static %s / %s, exact %s / %s" % (ls, cs, le, ce))
            continue
        res.check("static plan differs %s" % n, (ls, cs) != (le, ce), "static and exact plans are the same")
        blind = [d for d in exact["diagnostics"] if d["code"] == "static-blind"]
        res.check("static-blind reported %s" % n, blind and all(d["span"] and d["span"]["line"] >= 1 for d in blind),
                  "no static-blind diagnostic with a span")


# ------------------------------------------------------------------------------------------------


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def test_errors(shardlens, res, workdir):
    def export(script, *args, env=None, out="out.pt"):
        return run([shardlens, "export", script, "-o", os.path.join(workdir, out)] + list(args), env=env)

    def expect(name, result, code, *needles):
        got_code, out, err = result
        text = out + err
        missing = [n for n in needles if n not in text]
        res.check(name, got_code == code and not missing,
                  "exit %d (want %d)%s: %s" % (got_code, code, "; missing %r" % missing if missing else "",
                                                err.strip()[-400:]))

    ok_model = write(os.path.join(workdir, "ok_model.py"),
                     "import torch.nn as nn\n\nmodel = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))\n\n"
                     "if __name__ == \"__main__\":\n    raise SystemExit(\"the __main__ block ran\")\n")
    raises = write(os.path.join(workdir, "raises.py"),
                   "import torch.nn as nn\n\n\ndef build():\n    return 1 / 0\n\n\nmodel = build()\n")
    no_module = write(os.path.join(workdir, "no_module.py"), "import torch\n\nx = torch.zeros(3)\n")
    untraceable = write(os.path.join(workdir, "untraceable.py"),
                        "import numpy as np\nimport torch\nimport torch.nn as nn\n\n\nclass Numpy(nn.Module):\n"
                        "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n\n"
                        "    def forward(self, x):\n        y = self.proj(x).detach().numpy()\n"
                        "        return torch.from_numpy(np.tanh(y))\n\n\nmodel = Numpy()\n")
    fake_dir = os.path.join(workdir, "nopytorch")
    os.makedirs(fake_dir, exist_ok=True)
    fake = write(os.path.join(fake_dir, "python3"), "#!/bin/sh\n# a Python that cannot import torch\nexec %s -S \"$@\"\n" % PYTHON)
    os.chmod(fake, 0o755)

    expect("export: __main__ block not run, module-level root", export(ok_model), 0, "exported Sequential", "scripted")
    expect("export: missing file", export(os.path.join(workdir, "absent.py")), 1, "absent.py")
    expect("export: no FILE", run([shardlens, "export"]), 2, "usage: shardlens export")
    expect("export: bad --weights", export(ok_model, "--weights", "fp8"), 2, "--weights must be meta or random")
    expect("export: the script raises (last frame named)", export(raises), 4, "ZeroDivisionError", "raises.py:5")
    expect("export: no module", export(no_module), 5, "no model found")
    expect("export: --model fails", export(ok_model, "--model", "Missing(3)"), 5, "Missing(3)", "NameError")
    expect("export: --model not a module", export(ok_model, "--model", "3 + 4"), 5, "is a int, not an nn.Module")
    expect("export: torch missing (--python)", export(ok_model, "--python", fake), 3, "cannot import torch")
    expect("export: --python that does not exist", export(ok_model, "--python", os.path.join(workdir, "nope")), 3,
           "cannot run")
    # Default interpreter: a python3 without torch first on PATH is skipped.
    expect("export: first python3 on PATH lacks torch", export(ok_model, env={"PATH": fake_dir + ":" + os.environ["PATH"]}),
           0, "exported Sequential")
    expect("export: script and trace both fail (both reasons)", export(untraceable, out="failed.pt"), 6,
           "torch.jit.script failed", "torch.jit.trace failed")
    res.check("export: nothing written on failure", not os.path.exists(os.path.join(workdir, "failed.pt")),
              "failed.pt exists")
    expect("export: --method trace", export(ok_model, "--method", "trace", "--format", "json"), 0, '"method": "trace"')
    # shardlens graph / plan --graph on bad input.
    expect("graph: missing file", run([shardlens, "graph", os.path.join(workdir, "absent.pt")]), 1, "no such file")
    expect("graph: not TorchScript", run([shardlens, "graph", ok_model]), 1, "cannot load")
    expect("graph: bad --format", run([shardlens, "graph", ok_model, "--format", "xml"]), 2, "--format must be")
    expect("plan --graph: missing graph", run([shardlens, "plan", ok_model, "--graph", os.path.join(workdir, "absent.pt")]),
           1, "no such file")
    expect("plan --graph: --emit refused", run([shardlens, "plan", ok_model, "--graph", "x.pt", "--emit", "tt-xla"]), 2,
           "not yet supported with --graph")
    # A text plan and a text graph of the small model.
    pt = os.path.join(workdir, "ok.pt")
    run([shardlens, "export", ok_model, "-o", pt])
    expect("graph: text", run([shardlens, "graph", pt, "--format", "text"]), 0, "Sequential", "0.weight")
    expect("graph: dataflow", run([shardlens, "graph", pt, "--format", "dataflow"]), 0, "contract", "[1, 1, 8]")
    expect("plan --graph: text", run([shardlens, "plan", ok_model, "--graph", pt]), 0, "planned on the exact graph")
    # The graph is cached by content: the second answer comes from the cache.
    code, out, _ = run([shardlens, "graph", pt, "--format", "json"])
    res.check("graph: second answer from the cache", code == 0 and json.loads(out).get("cached") is True, out[:200])
    # Real random weights (for numeric checks): the same parameters as the meta export.
    tiny = os.path.join(FIXTURES, "tinynet.py")
    rand = os.path.join(workdir, "tiny_random.pt")
    meta = os.path.join(workdir, "tiny_meta.pt")
    code1, _, err1 = run([shardlens, "export", tiny, "--weights", "random", "-o", rand])
    code2, _, err2 = run([shardlens, "export", tiny, "-o", meta])
    if res.check("export: --weights random", code1 == 0 and code2 == 0, err1 + err2):
        g1 = json.loads(run([shardlens, "graph", rand, "--format", "json"])[1])
        g2 = json.loads(run([shardlens, "graph", meta, "--format", "json"])[1])
        res.check("export: random and meta weights give the same parameters",
                  shapes(g1["parameters"]) == shapes(g2["parameters"]) and g1["export"]["weights"] == "random",
                  first_difference(shapes(g1["parameters"]), shapes(g2["parameters"])))
    # shardlens itself never links LibTorch (it runs shardlens-graph).
    code, out, _ = run(["ldd", shardlens])
    res.check("shardlens does not link LibTorch", code == 0 and "libtorch" not in out and "libc10" not in out,
              [l for l in out.splitlines() if "torch" in l or "c10" in l])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("roundtrip", "plans", "errors"))
    ap.add_argument("--shardlens", required=True)
    opts = ap.parse_args()
    res = Results()
    workdir = tempfile.mkdtemp(prefix="shardlens-torch-")
    os.environ.setdefault("SHARDLENS_CACHE_DIR", os.path.join(workdir, "cache"))
    try:
        {"roundtrip": test_roundtrip, "plans": test_plans, "errors": test_errors}[opts.what](
            os.path.abspath(opts.shardlens), res, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return res.close()


if __name__ == "__main__":
    sys.exit(main())
