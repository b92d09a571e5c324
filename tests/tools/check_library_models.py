#!/usr/bin/env python3
"""Check shardlens' library models (analysis/python/library) with real PyTorch, no pytest needed.

For each tests/workspaces/NAME/load_model.py: run it under /usr/bin/python3 with the workspace as working
directory and PYTHONPATH=<workspace>:analysis/python/library (the library models stand in for transformers,
diffusers, einops, timm, Megatron-Core, fairscale, ... which are not installed), then compare
  * `# expected-total: N`  with the parameter total of the loader's `model` (named_parameters() de-duplicates
    tied weights), or
  * `# expected-error: TEXT` with the message of the exception the loader raises.
Prints one line per workspace and closes with `N passed, N failed`; exits 1 if any failed.

Usage: tests/tools/check_library_models.py [--python /usr/bin/python3] [NAME ...]
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = os.path.join(ROOT, "analysis", "python", "library")
WORKSPACES = os.path.join(ROOT, "tests", "workspaces")

# runs the loader like a user's script and reports what it built (or what it raised) on the last line
RUNNER = r"""
import os, runpy, sys
# The library models come last, after the interpreter's own site-packages, as shardlens searches
# them: a real installed package (numpy under torch) wins over its model.
sys.path.append(os.environ["SHARDLENS_LIBRARY"])
try:
    globs = runpy.run_path("load_model.py", run_name="__shardlens_check__")
except Exception as e:
    print("RAISED " + type(e).__name__ + ": " + str(e).replace("\n", " "))
    sys.exit(0)
model = globs.get("model")
if model is None:
    print("NO-MODEL")
else:
    print("TOTAL %d" % sum(p.numel() for p in model.parameters()))
"""


def expectation(loader):
    with open(loader) as f:
        text = f.read()
    total = re.search(r"^# expected-total: (\d+)\s*$", text, re.M)
    if total:
        return "total", int(total.group(1))
    error = re.search(r"^# expected-error: (.+?)\s*$", text, re.M)
    if error:
        return "error", error.group(1)
    return None, None


def check(name, python):
    workspace = os.path.join(WORKSPACES, name)
    loader = os.path.join(workspace, "load_model.py")
    kind, expected = expectation(loader)
    if kind is None:
        return False, "no `# expected-total: N` or `# expected-error: TEXT` line in load_model.py"
    env = dict(os.environ)
    env["PYTHONPATH"] = workspace
    env["SHARDLENS_LIBRARY"] = LIBRARY
    env.pop("PYTHONHOME", None)
    try:
        run = subprocess.run([python, "-c", RUNNER], cwd=workspace, env=env, capture_output=True, text=True,
                             timeout=300)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        tail = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
        return False, f"runner failed (exit {run.returncode}): {tail}"
    last = lines[-1]
    if kind == "total":
        if last == f"TOTAL {expected}":
            return True, f"{expected} parameters"
        return False, f"expected {expected} parameters, got: {last}"
    if last.startswith("RAISED ") and expected in last:
        return True, last[len("RAISED "):]
    return False, f"expected an error containing {expected!r}, got: {last}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="workspaces to check (default: all)")
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python that has PyTorch")
    opts = ap.parse_args(argv)
    names = opts.names or sorted(
        n for n in os.listdir(WORKSPACES) if os.path.isfile(os.path.join(WORKSPACES, n, "load_model.py"))
    )
    passed = failed = 0
    for name in names:
        ok, detail = check(name, opts.python)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
        if ok:
            passed += 1
        else:
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
