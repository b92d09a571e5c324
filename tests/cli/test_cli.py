#!/usr/bin/env python3
"""The shardlens command line on good and bad input: exit codes, messages, JSON schema.

Usage: test_cli.py PATH/TO/shardlens ALLOCATOR   (ALLOCATOR: what `shardlens version` should name)
Prints one line per check and a closing `N passed, N failed` line.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

SHARDLENS = sys.argv[1]
ALLOCATOR = sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "..", "shared", "fixtures")
results = []


def run(*args, stdin=None):
    p = subprocess.run([SHARDLENS, *args], input=stdin, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check(name, condition, detail=""):
    results.append(condition)
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + detail))


with tempfile.TemporaryDirectory() as tmp:
    # The version, and the allocator the binary was linked with, found at run time.
    code, out, err = run("version")
    check(f"version names the allocator ({ALLOCATOR})", code == 0 and out.startswith("shardlens ") and f"allocator: {ALLOCATOR}" in out, out)

    # A missing file.
    code, out, err = run("inspect", os.path.join(tmp, "nope.py"))
    check("missing file exits 1 with a message", code == 1 and "cannot open" in err and "nope.py" in err, err)

    # A directory.
    code, out, err = run("inspect", tmp)
    check("a directory is refused", code == 1 and "directory" in err, err)

    # An unreadable file: a FIFO with no writer would block, so use a path through a file.
    blocker = os.path.join(tmp, "plain")
    open(blocker, "w").close()
    code, out, err = run("inspect", os.path.join(blocker, "child.py"))
    check("an unreadable path exits 1", code == 1 and "cannot open" in err, err)

    # Binary content.
    binary = os.path.join(tmp, "binary.py")
    with open(binary, "wb") as f:
        f.write(bytes(range(256)) * 16)
    code, out, err = run("inspect", binary)
    check("binary content is refused", code == 1 and "not a text file" in err, err)

    # Empty file: no model, says why.
    empty = os.path.join(tmp, "empty.py")
    open(empty, "w").close()
    code, out, err = run("inspect", empty)
    check("an empty file has no model", code == 1 and "no model found" in err, err)

    # No qualifying model: the classes considered are listed.
    no_root = os.path.join(tmp, "no_root.py")
    with open(no_root, "w") as f:
        f.write("import torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n")
    code, out, err = run("inspect", no_root)
    check("no model found lists the candidates", code == 1 and "A (its constructor needs arguments)" in err, err)
    code, out, err = run("inspect", no_root, "--format", "json")
    j = json.loads(out) if out.strip() else {}
    check("json output on failure still parses and carries the error", code == 1 and "error" in j, out + err)

    # Flags.
    code, out, err = run("inspect")
    check("no FILE is a usage error", code == 2 and "usage" in err, err)
    code, out, err = run("inspect", no_root, "--format", "yaml")
    check("an unknown format is refused", code == 2 and "--format" in err, err)
    code, out, err = run("inspect", no_root, "--frobnicate")
    check("an unknown option is refused", code == 2 and "unknown option" in err, err)
    code, out, err = run("explode")
    check("an unknown command is refused", code == 2 and "unknown command" in err, err)
    code, out, err = run("--help")
    check("help prints usage", code == 0 and "inspect FILE" in out, out)

    # Standard input.
    with open(os.path.join(FIXTURES, "mlp.py"), "rb") as f:
        code, out, err = run("inspect", "-", "--format", "json", stdin=f.read())
    check("reads the script from standard input", code == 0 and json.loads(out)["total_parameters"] == 134217728, err)

    # --model.
    gpt = os.path.join(FIXTURES, "gpt.py")
    code, out, err = run("inspect", gpt, "--model", "GPT(GPTConfig(n_layer=2))", "--format", "json")
    j = json.loads(out)
    check("--model picks the root", code == 0 and j["root"] == "GPT(GPTConfig(n_layer=2))" and
          len([p for p in j["parameters"] if p["name"].startswith("h.")]) == 24, err)
    code, out, err = run("inspect", gpt, "--model", "GPT(")
    check("a malformed --model is a clear error", code == 1 and "not a Python expression" in err, err)

    # The JSON schema keys other tools read.
    code, out, err = run("inspect", gpt, "--format", "json")
    j = json.loads(out)
    keys = {"model", "source", "modules", "parameters", "total_parameters", "unresolved"}
    check("json has the stable keys", keys <= set(j), str(sorted(j)))
    p = j["parameters"][0]
    check("parameters carry name, shape and a 1-based span", set(p) >= {"name", "shape", "span"} and p["span"]["line"] >= 1, str(p))
    m = j["modules"][0]
    check("modules carry name, class and span", set(m) >= {"name", "class", "span"}, str(m))

    # Text output: folded repetition and totals.
    code, out, err = run("inspect", gpt)
    check("text folds repeated blocks", "(0-23): 24 x Block(" in out, out[:400])
    check("text has the parameter table and totals", "h.{0-23}.attn.qkv.weight" in out and "total parameters: " in out, out[-400:])

    # --- shardlens plan ---------------------------------------------------------------------
    mlp = os.path.join(FIXTURES, "mlp.py")
    for bad, expect in [("3x", "accepted"), ("0x8", "accepted"), ("t4k", "accepted"), ("1x8x2", "accepted"), ("", "accepted")]:
        code, out, err = run("plan", mlp, "--mesh", bad)
        check(f"plan --mesh '{bad}' is refused with the accepted forms", code == 2 and expect in err and "t3k" in err and "galaxy" in err, err)
    for flag, value in [("--batch", "0"), ("--batch", "-1"), ("--seq", "x"), ("--batch", "2.5")]:
        code, out, err = run("plan", mlp, flag, value)
        check(f"plan {flag} {value} is refused", code == 2 and "positive integer" in err, err)
    for flag, value, words in [("--phase", "train", "prefill or decode"), ("--dtype", "int4", "bf16, fp32 or bfp8"),
                               ("--hardware", "grayskull", "wormhole or blackhole"), ("--strategy", "pipeline", "auto or tensor"),
                               ("--format", "yaml", "text or json")]:
        code, out, err = run("plan", mlp, flag, value)
        check(f"plan {flag} {value} lists what is accepted", code == 2 and words in err, err)
    code, out, err = run("plan", mlp, "--mesh")
    check("plan --mesh without a value is a usage error", code == 2 and "needs a value" in err, err)
    code, out, err = run("plan", mlp, "--pin", "nope.weight=shard:0")
    check("plan --pin of an unknown parameter is refused", code == 2 and "no parameter" in err, err)
    code, out, err = run("plan", mlp, "--pin", "fc1.weight=sideways")
    check("plan --pin with a bad layout is refused", code == 2 and "shard:D" in err, err)
    code, out, err = run("plan", os.path.join(tmp, "nope.py"))
    check("plan of a missing file exits 1", code == 1 and "cannot open" in err, err)

    code, out, err = run("plan", mlp, "--mesh", "t3k", "--mesh", "1x2", "--format", "json")
    check("plan --format json exits 0", code == 0, err)
    j = json.loads(out) if code == 0 else {}
    check("plan json has the stable top-level keys", {"model", "workload", "meshes", "diagnostics"} <= set(j), str(sorted(j)))
    meshes = j.get("meshes", [])
    check("plan json has one entry per mesh, with shape and axes",
          [m["shape"] for m in meshes] == [[1, 8], [1, 2]] and all(m["axes"] == ["batch", "model"] for m in meshes), str(meshes)[:300])
    if meshes:
        m = meshes[0]
        check("plan json mesh keys", {"parameters", "collectives", "totals", "alternatives"} <= set(m), str(sorted(m)))
        params = {p["name"]: p for p in m["parameters"]}
        check("plan json parameters: layout and spec", params["fc1.weight"]["layout"] == "column" and params["fc1.weight"]["spec"] == ["model", None]
              and params["fc2.weight"]["spec"] == [None, "model"], str(params)[:300])
        c = m["collectives"][0] if m["collectives"] else {}
        check("plan json collectives: kind, axis, count, bytes, at, why",
              c.get("kind") == "all_reduce" and c.get("axis") == "model" and c.get("count") == 1 and c.get("bytes") == 8192
              and c.get("at") == "fc2" and "partial" in c.get("why", ""), str(c))
        t = m["totals"]
        check("plan json totals", {"collectives", "bytes", "est_time_us", "compute_parallel_fraction", "memory_per_device_bytes"} <= set(t)
              and t["collectives"] == 1 and 0.9 < t["compute_parallel_fraction"] <= 1.0, str(t))
        check("plan json alternatives carry totals and why_rejected",
              all({"name", "totals", "why_rejected"} <= set(a) for a in m["alternatives"]) and any(a["name"] == "replicated" for a in m["alternatives"]),
              str(m["alternatives"])[:300])

    code, out, err = run("plan", os.path.join(FIXTURES, "llama.py"), "--mesh", "1x32")
    check("plan text: divisibility diagnostic points at the config field",
          code == 0 and "llama.py:15:5: warning [divisibility-kv-heads]" in out, out[-600:])
    check("plan text: a per-component table with a Total row", "layers.*" in out and "Total" in out and "rejected:" in out, out[:600])

    # One flag reader: every command answers --help (usage on stdout, exit 0), and `--flag=value`
    # means `--flag value` everywhere.
    for command in ("inspect", "plan", "report", "export", "graph", "verify", "serve", "dataflow", "syntax-tree"):
        code, out, err = run(command, "--help")
        check(f"{command} --help prints its usage", code == 0 and out.startswith("usage: shardlens " + command) and not err, out + err)
    code, out, err = run("plan", mlp, "-h", "--mesh", "nonsense")
    check("plan -h wins over the flags after it", code == 0 and "usage: shardlens plan" in out, out + err)
    def untimed(out):  # plan_ms is how long this run took
        return {k: v for k, v in json.loads(out).items() if k != "plan_ms"} if out.startswith("{") else out
    code, a, err = run("plan", mlp, "--mesh", "1x2", "--phase", "prefill", "--format", "json")
    code2, b, err2 = run("plan", mlp, "--mesh=1x2", "--phase=prefill", "--format=json")
    check("plan --flag=value is --flag value", code == 0 and code2 == 0 and untimed(a) == untimed(b), err + err2)
    code, out, err = run("plan", mlp, "--mesh=")
    check("plan --mesh= (empty) is refused with the accepted forms", code == 2 and "accepted" in err, err)
    code, a, err = run("plan", mlp, "--pin", "fc1.weight=replicated", "--format", "json")
    code2, b, err2 = run("plan", mlp, "--pin=fc1.weight=replicated", "--format=json")
    check("plan --pin=NAME=LAYOUT is --pin NAME=LAYOUT", code == 0 and code2 == 0 and untimed(a) == untimed(b), err + err2)
    code, out, err = run("inspect", mlp, "--format=yaml")
    check("inspect --format=yaml is refused like --format yaml", code == 2 and "--format must be text or json" in err, err)
    code, out, err = run("report", mlp, "--format", "json")
    check("report --format points at plan", code == 2 and "belongs to `shardlens plan`" in err, err)
    # --input NAME=SHAPE[:DTYPE]: the input traced as given; bad specs and names say why.
    code, out, err = run("plan", mlp, "--phase", "prefill", "--input", "x=2x16x64", "--format", "json")
    inputs = json.loads(out).get("inputs", []) if code == 0 else []
    check("plan --input x=2x16x64 traces x with that shape", code == 0 and any(i.startswith("x: [2, 16, 64] float32 (given)") for i in inputs),
          err + str(inputs))
    for bad in ["x", "x=2x", "x=1x4:int4", "x=0x4"]:
        code, out, err = run("plan", mlp, "--input", bad)
        check(f"plan --input '{bad}' is refused", code == 2 and "NAME=SHAPE[:DTYPE]" in err, err)
    code, out, err = run("plan", mlp, "--input", "x=1x4", "--input", "x=1x8")
    check("plan --input given twice for one name is refused", code == 2 and "given twice" in err, err)
    code, out, err = run("plan", mlp, "--input", "y=1x4", "--format", "json")
    check("plan --input for a parameter forward() does not take says so", "forward() has no parameter of that name" in out + err, err)
    code, out, err = run("dataflow", mlp, "--tokens=0")
    check("dataflow --tokens takes a positive integer", code == 2 and "positive integer" in err, err)

    # Integers as Python has them: no trap, no abort, no wrap (issue 32).
    def inspect_json(name, text, *extra):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        code, out, err = run("inspect", path, "--format", "json", *extra)
        return code, (json.loads(out) if out.startswith("{") else {}), err

    header = "import math\nimport torch\nimport torch.nn as nn\n"
    code, m, err = inspect_json("int_min_div.py", header + (
        "width = -(2**63) // -1 % 7 + divmod(-(2**63), -1)[1] + (-(2**63)) % -1\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, width + max(range(-(2**63), 0)) + 2)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x) * (-(2**63) // -1)\n"
        "model = Net()\n"))
    # -(2**63) // -1 == 2**63, whose % 7 is 1; max(range(-(2**63), 0)) == -1.
    check("-(2**63) // -1, % and divmod do not trap; max(range(-(2**63), 0)) does not abort",
          code == 0 and [p["shape"] for p in m["parameters"]] == [[2, 4], [2]], err or str(m)[:300])
    code, out, err = run("plan", os.path.join(tmp, "int_min_div.py"), "--mesh", "1x2")
    check("... nor in forward() while planning", code == 0, err[-300:])

    code, m, err = inspect_json("huge_dim.py", header + "model = nn.Linear(4, 2**64)\n")
    check("a dim beyond int64 is unknown and says so, not a wrapped number",
          code == 0 and m["parameters"][0]["shape"] is None
          and any("beyond 64 bits" in u["reason"] for u in m["unresolved"]), str(m)[:400])

    code, m, err = inspect_json("huge_total.py", header + "model = nn.Linear(10**12, 10**12)\n")
    check("a parameter total beyond int64 is exact (a decimal string in JSON)",
          code == 0 and m["total_parameters"] == str(10**24 + 10**12), str(m.get("total_parameters")))
    code, out, err = run("inspect", os.path.join(tmp, "huge_total.py"))
    check("... and in text", code == 0 and "total parameters: 1,000,000,000,001,000,000,000,000" in out, out[-300:])
    code, m, err = inspect_json("factorial.py", header + "model = nn.Linear(math.factorial(20), 10, bias=False)\n")
    check("a factorial's total does not turn negative",
          code == 0 and m["total_parameters"] == str(math.factorial(20) * 10), str(m.get("total_parameters")))
    code, m, err = inspect_json("small_total.py", header + "model = nn.Linear(3, 2)\n")
    check("a total within int64 stays a JSON number", code == 0 and m["total_parameters"] == 8, str(m.get("total_parameters")))

    code, m, err = inspect_json("recursive_class.py", header + (
        "class Block(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n"
        "        self.inner = Block()\n"
        "model = Block()\n"))
    reported = "RecursionError" in err + m.get("error", "") or any("RecursionError" in u["what"] + u["reason"] for u in m.get("unresolved", []))
    check("a class that builds itself recursively is a RecursionError, not a 150-deep model",
          reported and len(m.get("modules", [])) < 10, (err + str(m))[:400])

    # Bounded memory: the budget is a flag, the file cap is the server's (issue 32).
    code, m, err = inspect_json("doubling.py", header + "model = nn.Linear(2, 2)\ns = 'ab'\nwhile True:\n    s += s\n",
                                "--memory-budget", "16")
    check("a doubling string stops at --memory-budget with an unresolved entry naming it",
          code == 0 and len(m["parameters"]) == 2 and any("memory budget of 16 MiB" in u["reason"] for u in m["unresolved"]),
          (err + str(m))[:400])
    code, out, err = run("inspect", os.path.join(tmp, "doubling.py"), "--memory-budget", "lots")
    check("a bad --memory-budget is a usage error", code == 2 and "--memory-budget" in err, err)
    for command in ("plan", "report"):
        code, out, err = run(command, os.path.join(tmp, "doubling.py"), "--memory-budget=0")
        check(f"{command} reads --memory-budget through the same flag reader", code == 2 and "--memory-budget must be a positive integer" in err, err)
    inspect_json("doubling_net.py", header + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(8, 8)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "model = Net()\ns = 'ab'\nwhile True:\n    s += s\n"), "--memory-budget=16")
    code, out, err = run("plan", os.path.join(tmp, "doubling_net.py"), "--memory-budget=16", "--mesh", "1x2")
    # The budget is the whole analysis': spent at module level, forward() is not traced either, and the plan says so.
    check("plan takes --memory-budget=MIB and says the budget stopped the analysis",
          code == 0 and "trace-incomplete" in out and "memory budget exhausted" in out, (out + err)[-400:])
    # A forward() that fails its own assertion on the workload is traced past it; the plan says where.
    with open(os.path.join(tmp, "asserting.py"), "w") as f:
        f.write(header + (
            "class Net(nn.Module):\n"
            "    def __init__(self, max_batch_size=0):\n"
            "        super().__init__()\n"
            "        self.max_batch_size = max_batch_size\n"
            "        self.fc = nn.Linear(8, 8)\n"
            "    def forward(self, x):\n"
            "        assert x.shape[0] <= self.max_batch_size\n"
            "        return self.fc(x)\n"
            "model = Net()\n"))
    code, out, err = run("plan", os.path.join(tmp, "asserting.py"), "--mesh", "1x2", "--input", "x=4x8", "--format", "json")
    diags = json.loads(out).get("diagnostics", []) if code == 0 else []
    failed = [d for d in diags if d.get("code") == "assertion-failed"]
    check("a failed assert in forward() is a warning at its line and the trace goes on past it",
          code == 0 and len(failed) == 1 and failed[0]["severity"] == "warning" and failed[0]["span"]["line"] == header.count("\n") + 7
          and not any(d.get("code") == "trace-incomplete" for d in diags), (out + err)[-600:])
    # An image input given by shape decides its own length: no note about the nominal sequence and the position table.
    with open(os.path.join(tmp, "vit_like.py"), "w") as f:
        f.write(header + (
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.patch = nn.Conv2d(3, 8, kernel_size=4, stride=4)\n"
            "        self.pos_embedding = nn.Parameter(torch.zeros(1, 17, 8))\n"
            "        self.cls = nn.Parameter(torch.zeros(1, 1, 8))\n"
            "    def forward(self, img):\n"
            "        x = self.patch(img).flatten(2).transpose(1, 2)\n"
            "        return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding\n"
            "model = Net()\n"))
    code, out, err = run("plan", os.path.join(tmp, "vit_like.py"), "--mesh", "1x2", "--seq", "64", "--input", "img=1x3x16x16", "--format", "json")
    notes = json.loads(out).get("notes", []) if code == 0 else ["exit %d" % code]
    check("a shape given with --input is not compared with the nominal sequence",
          not any("position table" in n for n in notes), (out + err)[-600:])
    big = os.path.join(tmp, "big.py")
    with open(big, "w") as f:
        f.write("x = 1\n" * (3 << 19))  # 9 MiB
    code, out, err = run("inspect", big)
    check("a file over 8 MiB is refused as the server refuses it", code == 1 and "larger than 8 MiB" in err, err)

    # Every model script in the repository plans without crashing (exit 0, or 1 with a message).
    import glob
    crashed = []
    scripts = sorted(glob.glob(os.path.join(ROOT, "tests", "models", "*.py")) + glob.glob(os.path.join(ROOT, "tests", "known_gaps", "*.py")))
    for script in scripts:
        code, out, err = run("plan", script, "--format", "json")
        if code not in (0, 1) or (code == 0 and not out.startswith("{")) or (code == 1 and not err.strip()):
            crashed.append(f"{os.path.basename(script)}: exit {code} {err[-200:]}")
    check(f"plan runs on all {len(scripts)} model scripts without crashing", not crashed and len(scripts) > 100, "; ".join(crashed[:5]))

    # A decoder LM's prefill keeps its decode plan's weight layouts (one copy of the weights serves
    # both phases) unless --prefill-weights own says prefill runs on devices of its own.
    llama = os.path.join(ROOT, "tests", "models", "hf_style_llama.py")
    def weights(plan_json):
        return {p["name"]: p["layout"] for p in plan_json["meshes"][0]["parameters"] if len(p.get("spec") or []) >= 2}
    code, out, err = run("plan", llama, "--phase", "decode", "--seq", "2048", "--format", "json")
    decode = json.loads(out) if code == 0 else {}
    code, out, err = run("plan", llama, "--phase", "prefill", "--seq", "2048", "--format", "json")
    shared = json.loads(out) if code == 0 else {}
    check("prefill of a decoder LM takes the decode plan's weight layouts",
          decode and shared and shared["workload"].get("weights_from") == "decode" and weights(shared) == weights(decode)
          and any(l != "replicated" for l in weights(decode).values()), err[-300:])
    alone = [a for a in shared.get("meshes", [{}])[0].get("alternatives", []) if a["name"] == "weights laid out for prefill alone"]
    check("the prefill-only weight layout is listed as excluded by decode's",
          all("excluded by the decode plan's weight layouts" in a["why_rejected"] for a in alone), json.dumps(alone)[:300])
    code, out, err = run("plan", llama, "--phase", "prefill", "--seq", "2048", "--format", "json", "--prefill-weights", "own")
    own = json.loads(out) if code == 0 else {}
    check("--prefill-weights own plans prefill's weights for prefill alone",
          own and "weights_from" not in own["workload"] and
          not any(a["name"] == "weights laid out for prefill alone" for a in own["meshes"][0]["alternatives"]), err[-300:])
    code, out, err = run("plan", llama, "--prefill-weights", "both")
    check("a bad --prefill-weights is refused", code == 2 and "--prefill-weights" in err, err)

    # A parameter built in an imported module: plan JSON names that module's file, as inspect JSON
    # does (a line alone would point into the loader script).
    loader = os.path.join(ROOT, "tests", "workspaces", "imports_package", "load_model.py")
    code, out, err = run("inspect", loader, "--format", "json")
    inspected = {p["name"]: p["span"] for p in json.loads(out)["parameters"]} if code == 0 else {}
    code, out, err = run("plan", loader, "--mesh", "1x2", "--format", "json")
    planned = {p["name"]: p["span"] for p in json.loads(out)["meshes"][0]["parameters"]} if code == 0 else {}
    imported = [n for n, s in inspected.items() if s.get("file")]
    check("plan JSON gives a parameter built in an imported module its file, as inspect does",
          imported and all(planned.get(n) == inspected[n] for n in imported),
          str([(n, inspected[n], planned.get(n)) for n in imported[:2]]))

    # Every workspace loader (a model imported from a package beside it, or from the library models) gives
    # the total its `# expected-total:` line states (checked under CPython by library_models.cpython), with
    # nothing unresolved unless the loader is marked as a known gap.
    workspaces = os.path.join(ROOT, "tests", "workspaces")
    for name in sorted(os.listdir(workspaces)):
        loader = os.path.join(workspaces, name, "load_model.py")
        text = open(loader).read() if os.path.exists(loader) else ""
        want = re.search(r"^# expected-total: (\d+)\s*$", text, re.M)
        if not want:
            continue
        code, out, err = run("inspect", loader, "--format", "json")
        got = json.loads(out) if code == 0 else {}
        gap = "# shardlens-test: known-gap" in text
        check(f"workspace {name}: inspect gives its expected total" + ("" if gap else " with nothing unresolved"),
              got.get("total_parameters") == int(want.group(1)) and (gap or not got.get("unresolved")),
              f"{got.get('total_parameters')} vs {want.group(1)}; {json.dumps(got.get('unresolved', []))[:300]} {err[-200:]}")

    # A package that loads its names lazily (sys.modules[__name__] replaced by a ModuleType subclass
    # whose __getattr__ calls importlib.import_module; diffusers and transformers do this), configs
    # recorded through inspect.signature, switches from find_spec / importlib.metadata.version: the
    # model is found, and forward() (which reads the config back) traces to its end.
    lazy = os.path.join(ROOT, "tests", "workspaces", "lazy_package", "load_model.py")
    code, out, err = run("plan", lazy, "--phase", "prefill", "--mesh", "1x2", "--format", "json")
    lazy_plan = json.loads(out) if code == 0 else {}
    check("a lazily loaded package's model plans with forward() traced completely",
          lazy_plan and not [d for d in lazy_plan.get("diagnostics", []) if "trace" in d.get("code", "")]
          and lazy_plan["inputs"][0].startswith("pixel_values: [1, 3, 32, 32]")
          and {"blocks.1.self_attn", "head"} <= {c["module"] for c in lazy_plan["meshes"][0]["components"]},
          (err + json.dumps(lazy_plan.get("diagnostics", []))[:400]))

    # --python: the interpreter's site-packages are searched after the library models, so an
    # installed transformers contributes its model files while shardlens' models of its core
    # (which the interpreter cannot run) stand in for the rest. The interpreter here is a stand-in
    # that answers `-I -c` with its sys.path, as CPython prints it.
    site = os.path.join(tmp, "venv", "lib", "python3.11", "site-packages")
    files = {
        "transformers/__init__.py": "raise RuntimeError('the installed transformers/__init__.py ran')\n",
        "transformers/modeling_utils.py": "raise RuntimeError('the installed modeling_utils ran')\n",
        "transformers/models/__init__.py": "",
        "transformers/models/tinyx/__init__.py": "",
        "transformers/models/tinyx/modeling_tinyx.py": (
            "import torch.nn as nn\n"
            "from ...configuration_utils import PretrainedConfig\n"
            "from ...modeling_utils import PreTrainedModel\n\n\n"
            "class TinyxConfig(PretrainedConfig):\n"
            "    model_type = 'tinyx'\n\n"
            "    def __init__(self, hidden_size=32, **kwargs):\n"
            "        self.hidden_size = hidden_size\n"
            "        super().__init__(**kwargs)\n\n\n"
            "class TinyxModel(PreTrainedModel):\n"
            "    config_class = TinyxConfig\n\n"
            "    def __init__(self, config):\n"
            "        super().__init__(config)\n"
            "        self.proj = nn.Linear(config.hidden_size, config.hidden_size)\n"
            "        self.post_init()\n"),
        "mylib/__init__.py": "from .blocks import Block\n",
        "mylib/blocks.py": (
            "import torch.nn as nn\n\n\n"
            "class Block(nn.Module):\n"
            "    def __init__(self, d):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(d, 2 * d, bias=False)\n"),
    }
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(site, rel)), exist_ok=True)
        with open(os.path.join(site, rel), "w") as f:
            f.write(text)
    fake_python = os.path.join(tmp, "venv", "bin", "python3")
    os.makedirs(os.path.dirname(fake_python), exist_ok=True)
    with open(fake_python, "w") as f:
        f.write("#!/bin/sh\n"
                "[ \"$1\" = -I ] && [ \"$2\" = -c ] || exit 3\n"
                "echo /usr/lib/python311.zip\necho /usr/lib/python3.11\necho /usr/lib/python3.11/lib-dynload\n"
                f"echo {site}\n")
    os.chmod(fake_python, 0o755)
    user_dir = os.path.join(tmp, "user_project")
    os.makedirs(user_dir)
    user_loader = os.path.join(user_dir, "load_model.py")
    with open(user_loader, "w") as f:
        f.write("import torch.nn as nn\n"
                "from transformers.models.tinyx.modeling_tinyx import TinyxConfig, TinyxModel\n"
                "from mylib import Block\n\n\n"
                "class Both(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.hf = TinyxModel(TinyxConfig(hidden_size=16))\n"
                "        self.block = Block(16)\n\n\n"
                "model = Both()\n")
    code, out, err = run("inspect", user_loader, "--format", "json", "--python", fake_python)
    got = json.loads(out) if code == 0 else {}
    check("--python: site-packages are searched, the library models standing in for the installed core",
          got.get("total_parameters") == 16 * 16 + 16 + 16 * 32 and not got.get("unresolved"),
          json.dumps(got.get("unresolved", err))[:400])
    code, out, err = run("inspect", user_loader, "--format", "json")
    got = json.loads(out) if out.strip().startswith("{") else {}
    check("without --python no site-packages are searched (no interpreter runs unasked)",
          "No module named 'transformers.models.tinyx'" in json.dumps(got.get("unresolved", [])) or "tinyx" in err, (out + err)[-300:])
    code, out, err = run("inspect", user_loader, "--python", os.path.join(tmp, "no-such-python"))
    check("an interpreter that cannot run is said, and the analysis goes on without its site-packages",
          "--python" in err and "not searched" in err, err[-300:])

failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
