#!/usr/bin/env python3
"""Plans of two shardlens builds, compared as JSON over every test model.

For a change to the planner's search that must not change its plans: runs `plan --format json`
with both binaries over tests/**/*.py, examples/*.py and bench/models/*.py, in both phases, over
the meshes n300, t3k, galaxy and 1x32 together (one plan across meshes, as the server makes it),
drops timing fields, and diffs. A difference where the old plan was not proven optimal (its
"not proven optimal" note) is listed apart: there the old search was cut, not exact.

  bench/compare_plans.py --old /work/main/build/shardlens --new build/shardlens [--jobs 2] [FILTER]
  bench/compare_plans.py --old build/shardlens --old-env SHARDLENS_PLAN_BODY=programme --new build/shardlens
    (the same build with its body search forced to the dynamic programme alone, as before issue 35)

Prints one line per difference and a summary with each binary's total time; exits 1 when a plan
differs where the old search was exact.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MESHES = ["n300", "t3k", "galaxy", "1x32"]
TIMING_KEYS = {"plan_ms", "ms", "elapsed_ms", "time_ms"}


def models(pattern):
    found = []
    for g in ("tests/**/*.py", "examples/*.py", "bench/models/*.py"):
        found += glob.glob(os.path.join(ROOT, g), recursive=True)
    found = sorted(set(found))
    skip = ("/tools/", "/nvim/", "/lsp/", "/fuzz/")  # test drivers, not models
    found = [f for f in found if not any(s in f for s in skip)]
    return [f for f in found if pattern in f]


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def run(binary, model, phase, timeout, env=None):
    cmd = [binary, "plan", model, "--format", "json", "--phase", phase]
    for m in MESHES:
        cmd += ["--mesh", m]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=os.path.dirname(model), env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout", timeout
    seconds = time.monotonic() - t0
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1], seconds
    try:
        return strip(json.loads(p.stdout)), None, seconds
    except json.JSONDecodeError as e:
        return None, "bad json: %s" % e, seconds


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s" % (path, k)
            d = first_difference(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s (length %d vs %d)" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (path, a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--old-env", action="append", default=[], metavar="VAR=VALUE", help="set for the old binary's runs")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("filter", nargs="?", default="")
    args = ap.parse_args()
    cases = [(m, ph) for m in models(args.filter) for ph in ("prefill", "decode")]

    old_env = dict(os.environ)
    for kv in args.old_env:
        k, _, v = kv.partition("=")
        old_env[k] = v

    def one(case):
        model, phase = case
        old = run(os.path.abspath(args.old), model, phase, args.timeout, old_env)
        new = run(os.path.abspath(args.new), model, phase, args.timeout)
        return case, old, new

    same = differ_exact = differ_cut = errors = 0
    old_s = new_s = 0.0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for (model, phase), (a, ea, ta), (b, eb, tb) in pool.map(one, cases):
            name = "%s %s" % (os.path.relpath(model, ROOT), phase)
            old_s += ta
            new_s += tb
            if ea or eb:
                if ea == eb:
                    same += 1  # both refuse it alike (not a model, or an error both give)
                else:
                    errors += 1
                    print("ERROR   %s: old %s / new %s" % (name, ea, eb))
                continue
            d = first_difference(a, b)
            if d is None:
                same += 1
                continue
            notes = " ".join(a.get("notes", [])) if isinstance(a, dict) else ""
            if "not proven optimal" in notes:
                differ_cut += 1
                print("CUT     %s (old search was cut): %s" % (name, d))
            else:
                differ_exact += 1
                print("DIFFER  %s: %s" % (name, d))
            print("        old %.2f s, new %.2f s" % (ta, tb))
    print("compared %d: %d identical, %d differ where the old search was exact, %d differ where it was cut, %d errors; "
          "old %.1f s, new %.1f s" % (len(cases), same, differ_exact, differ_cut, errors, old_s, new_s))
    return 1 if differ_exact or errors else 0


if __name__ == "__main__":
    sys.exit(main())
