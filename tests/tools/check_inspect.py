#!/usr/bin/env python3
"""Compare `shardlens inspect SCRIPT --format json` with what PyTorch really
builds (tests/tools/torch_ground_truth.py).

Usage:
    /usr/bin/python3 tests/tools/check_inspect.py --shardlens build/shardlens SCRIPT.py [SCRIPT.py ...]

Directives, read from the script's leading comment lines:
    # shardlens-test: --model "EXPR"      args given to BOTH tools (shlex syntax)
    # shardlens-test: --main              ground truth runs the __main__ block
    # shardlens-test: allow-unresolved    a non-empty `unresolved` list is fine
    # shardlens-test: known-gap WHY       (CMake) expected to differ until the front end learns it

What must match exactly: the root class name, parameter names in order with
shapes, total_parameters, module names in order with class names, buffer
names in order with shapes. Every parameter and module of shardlens' output
must also carry a span with line >= 1.

Per script prints `ok SCRIPT: N parameters, M modules` or `FAIL SCRIPT: ...`
with a short unified diff (ground truth = "torch", shardlens = "shardlens").
With several scripts a closing line `N passed, N failed` is printed.
Exit status: 0 all matched, 1 some mismatch or error.
"""

import argparse
import difflib
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GROUND_TRUTH = os.path.join(HERE, "torch_ground_truth.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
DIFF_LINES = 30
TIMEOUT = 300


class CheckFailed(Exception):
    pass


def read_directives(path):
    """(args for both tools, ground-truth-only args, allow_unresolved)."""
    both, gt_only, allow_unresolved = [], [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if not s.startswith("#"):
                break
            body = s.lstrip("#").strip()
            if not body.startswith("shardlens-test:"):
                continue
            if body[len("shardlens-test:"):].strip().startswith("known-gap"):
                continue  # read by CMake (the test is expected to fail), not an argument
            words = shlex.split(body[len("shardlens-test:"):])
            i = 0
            while i < len(words):
                w = words[i]
                if w == "allow-unresolved":
                    allow_unresolved = True
                elif w == "--main":
                    gt_only.append(w)
                elif w in ("--model", "--class") and i + 1 < len(words):
                    both.extend([w, words[i + 1]])
                    i += 1
                else:
                    both.append(w)
                i += 1
    return both, gt_only, allow_unresolved


def run_json(cmd, who):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT, universal_newlines=True)
    except subprocess.TimeoutExpired:
        raise CheckFailed("%s timed out after %ds: %s" % (who, TIMEOUT, " ".join(map(shlex.quote, cmd))))
    except OSError as e:
        raise CheckFailed("%s could not run: %s" % (who, e))
    if p.returncode != 0:
        err = (p.stderr or "").strip().splitlines()
        raise CheckFailed("%s exited with %d: %s\n%s" % (
            who, p.returncode, " ".join(map(shlex.quote, cmd)), "\n".join("  " + l for l in err[-15:])))
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise CheckFailed("%s printed no valid JSON (%s); stdout starts: %r" % (who, e, p.stdout[:200]))


def shape_str(shape):
    if shape is None:  # shardlens could not resolve it (explained in `unresolved`)
        return "[?]"
    return "[" + ", ".join(str(d) for d in shape) + "]"


def lines_of(report, who):
    try:
        out = ["model: %s" % report["model"],
               "total_parameters: %s" % report["total_parameters"]]
        out += ["param %s %s" % (p["name"], shape_str(p["shape"])) for p in report["parameters"]]
        out += ["module %s %s" % (m["name"], m["class"]) for m in report["modules"]]
        out += ["buffer %s %s" % (b["name"], shape_str(b["shape"])) for b in report.get("buffers", [])]
    except (KeyError, TypeError) as e:
        raise CheckFailed("%s output does not follow the schema: missing/bad %s" % (who, e))
    return out


def span_problems(report):
    bad = []
    for kind, key in (("parameter", "parameters"), ("module", "modules")):
        for item in report.get(key, []):
            span = item.get("span")
            line = span.get("line") if isinstance(span, dict) else None
            if not isinstance(line, int) or isinstance(line, bool) or line < 1:
                bad.append("%s %s has no span with line >= 1 (span=%r)" % (kind, item.get("name"), span))
    return bad


def check(shardlens, script):
    both, gt_only, allow_unresolved = read_directives(script)
    sl = run_json([shardlens, "inspect", script, "--format", "json"] + both, "shardlens")
    gt_cmd = [PYTHON, GROUND_TRUTH, script] + both + gt_only
    if "--model" not in both and "--class" not in both and isinstance(sl, dict) and sl.get("model"):
        # only used by the ground truth when the script has no module-level instance
        gt_cmd += ["--class", str(sl["model"])]
    gt = run_json(gt_cmd, "ground truth")

    problems = []
    a, b = lines_of(gt, "ground truth"), lines_of(sl, "shardlens")
    if a != b:
        diff = list(difflib.unified_diff(a, b, "torch", "shardlens", n=1, lineterm=""))
        more = len(diff) - DIFF_LINES
        diff = diff[:DIFF_LINES]
        if more > 0:
            diff.append("... (%d more diff lines)" % more)
        problems.append("differs from torch:\n" + "\n".join("  " + l for l in diff))
    spans = span_problems(sl)
    if spans:
        problems.append("missing spans:\n" + "\n".join("  " + l for l in spans[:10]) +
                        ("\n  ... (%d more)" % (len(spans) - 10) if len(spans) > 10 else ""))
    unresolved = sl.get("unresolved") or []
    if unresolved and not allow_unresolved:
        shown = []
        for u in unresolved[:10]:
            span = u.get("span") or {}
            shown.append("  line %s: %s: %s" % (span.get("line", "?"), u.get("what"), u.get("reason")))
        if len(unresolved) > 10:
            shown.append("  ... (%d more)" % (len(unresolved) - 10))
        problems.append("unresolved is not empty (add `# shardlens-test: allow-unresolved` if expected):\n"
                        + "\n".join(shown))
    if problems:
        raise CheckFailed("\n".join(problems))
    return len(gt["parameters"]), len(gt["modules"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shardlens", required=True, help="path to the shardlens binary")
    ap.add_argument("scripts", nargs="+", metavar="SCRIPT.py")
    opts = ap.parse_args(argv)

    passed = failed = 0
    for script in opts.scripts:
        try:
            n_params, n_modules = check(opts.shardlens, script)
        except CheckFailed as e:
            failed += 1
            print("FAIL %s: %s" % (script, e))
        else:
            passed += 1
            print("ok %s: %d parameters, %d modules" % (script, n_params, n_modules))
        sys.stdout.flush()
    if len(opts.scripts) > 1:
        print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
