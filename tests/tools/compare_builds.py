#!/usr/bin/env python3
"""compare_builds.py OLD_SHARDLENS NEW_SHARDLENS [--jobs N] [--timeout S] [--corpus DIR] [FILE ...]

A restructuring check: two builds of shardlens must print byte-identical outputs. For every model
script (default: tests/**, examples/, bench/models; with --corpus DIR also DIR/*/load_model.py) it
runs `inspect --format json`, `plan --format json` and `report -o -` with each binary, from the
script's folder, and compares stdout (with the plan's `"plan_ms": ...` line, a timing, masked) and
the exit status (stderr is compared too, reported apart:
a message may change on purpose). Prints one line per difference and a summary; exit status 1 when
stdout or an exit status differs.

--library-lines-may-move: spans inside shardlens' bundled library models ("<shardlens-library>/...")
are compared by file only, for a change that moves lines within those files and nothing else."""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMING = re.compile(rb'"plan_ms": [0-9.e+-]+')
LIBRARY_SPAN = re.compile(rb'"column": \d+,\s*"end_column": \d+,\s*"end_line": \d+,\s*("file": "<shardlens-library>/[^"]*"),\s*"line": \d+')
LIBRARY_PLACE = re.compile(rb'(<shardlens-library>/[^\s:"]+):\d+(:\d+)?')
COMMANDS = (["inspect", "--format", "json"], ["plan", "--format", "json"], ["report", "-o", "-"])


def scripts(corpus):
    found = []
    for pattern in ("tests/**/*.py", "examples/**/*.py", "bench/models/*.py"):
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            if "node_modules" not in path and "/tests/tools/" not in path:
                found.append(path)
    if corpus:
        found += glob.glob(os.path.join(corpus, "*", "load_model.py"))
    return sorted(set(found))


def run(exe, command, script, timeout):
    try:
        r = subprocess.run([exe] + command[:1] + [script] + command[1:], cwd=os.path.dirname(script),
                           capture_output=True, timeout=timeout)
        return r.returncode, TIMING.sub(rb'"plan_ms": 0', r.stdout), r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


def without_library_lines(result):
    code, out, err = result
    out = LIBRARY_PLACE.sub(rb"\1", LIBRARY_SPAN.sub(rb"\1", out))
    return code, out, LIBRARY_PLACE.sub(rb"\1", err)


def compare(old, new, command, script, timeout, library_lines_may_move):
    a, b = run(old, command, script, timeout), run(new, command, script, timeout)
    if library_lines_may_move:
        a, b = without_library_lines(a), without_library_lines(b)
    return command[0], script, a, b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--corpus")
    ap.add_argument("--library-lines-may-move", action="store_true")
    args = ap.parse_intermixed_args()
    files = [os.path.abspath(f) for f in args.files] or scripts(args.corpus)
    old, new = os.path.abspath(args.old), os.path.abspath(args.new)
    stdout_diffs = stderr_diffs = runs = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(compare, old, new, c, f, args.timeout, args.library_lines_may_move) for f in files for c in COMMANDS]
        for fut in concurrent.futures.as_completed(futures):
            name, script, (rc_a, out_a, err_a), (rc_b, out_b, err_b) = fut.result()
            runs += 1
            where = os.path.relpath(script, ROOT)
            if rc_a == "timeout" or rc_b == "timeout":
                print(f"TIMEOUT {name} {where}: old {rc_a}, new {rc_b}")
                stdout_diffs += rc_a != rc_b
            elif rc_a != rc_b or out_a != out_b:
                stdout_diffs += 1
                print(f"DIFFERS {name} {where}: exit {rc_a} -> {rc_b}, stdout {len(out_a)} -> {len(out_b)} bytes")
            elif err_a != err_b:
                stderr_diffs += 1
                print(f"stderr  {name} {where}: {err_a.decode(errors='replace')[:200]!r} -> {err_b.decode(errors='replace')[:200]!r}")
    print(f"{runs} runs over {len(files)} scripts: {stdout_diffs} differ in stdout or exit status, {stderr_diffs} in stderr only")
    return 1 if stdout_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
