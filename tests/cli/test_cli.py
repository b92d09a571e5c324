#!/usr/bin/env python3
"""The shardlens command line on good and bad input: exit codes, messages, JSON schema.

Usage: test_cli.py PATH/TO/shardlens
Prints one line per check and a closing `N passed, N failed` line.
"""
import json
import os
import subprocess
import sys
import tempfile

SHARDLENS = sys.argv[1]
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

failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
