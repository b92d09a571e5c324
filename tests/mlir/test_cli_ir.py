"""`shardlens check-ir` and `shardlens calibrate` end to end: exit codes, outputs, the profile round trip.

usage: test_cli_ir.py PATH/TO/shardlens
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
failures = []


def run(*args):
    p = subprocess.run([SHARDLENS, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


SHARDLENS = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="shardlens-ir-")
try:
    code, out, err = run("plan", os.path.join(HERE, "models", "ffn.py"), "--mesh", "n300", "--format", "json")
    check(code == 0, f"plan exits 0 ({code}: {err})")
    plan_path = os.path.join(tmp, "plan.json")
    with open(plan_path, "w") as f:
        f.write(out)
    ir = os.path.join(HERE, "ir")
    for level in ("shlo", "ttir", "ttnn"):
        code, out, err = run("check-ir", os.path.join(ir, f"ffn_n300.{level}.mlir"), "--plan", plan_path)
        check(code == 0 and "matches the plan" in out, f"{level}: a matching export exits 0 ({code}: {out}{err})")
        code, out, err = run("check-ir", os.path.join(ir, f"ffn_n300_extra_all_gather.{level}.mlir"), "--plan", plan_path, "--format", "json")
        report = json.loads(out) if out.strip() else {}
        check(code == 3 and [m["kind"] for m in report.get("mismatches", [])] == ["extra"], f"{level}: an extra all-gather exits 3, named ({code}: {out}{err})")
        code, out, err = run("check-ir", os.path.join(ir, f"ffn_n300_wrong_dim.{level}.mlir"), "--plan", plan_path)
        check(code == 3 and "weight_sharding" in out and "up.weight" in out, f"{level}: a weight on the wrong dim exits 3, named ({code}: {out}{err})")
    # A tt-xla export folder: every .mlir in it, and its plan.json when --plan is not given.
    export = os.path.join(tmp, "export")
    os.makedirs(export)
    for level in ("shlo", "ttir", "ttnn"):
        shutil.copy(os.path.join(ir, f"ffn_n300.{level}.mlir"), export)
    shutil.copy(plan_path, os.path.join(export, "plan.json"))
    code, out, err = run("check-ir", export)
    check(code == 0 and out.count("(stablehlo)") == 1 and out.count("(ttnn)") == 1, f"a folder is checked file by file ({code}: {out}{err})")
    shutil.copy(os.path.join(ir, "ffn_n300_wrong_dim.ttir.mlir"), export)
    code, out, err = run("check-ir", export, "--format", "json")
    check(code == 3 and json.loads(out)["verdict"] == "mismatch", f"a folder with one bad file exits 3 ({code})")
    # Bad input.
    code, out, err = run("check-ir", os.path.join(tmp, "nope.mlir"), "--plan", plan_path)
    check(code == 1 and "nope.mlir" in err, f"a missing IR file exits 1 ({code}: {err})")
    code, out, err = run("check-ir", os.path.join(ir, "ffn_n300.ttir.mlir"))
    check(code == 2 and "--plan" in err, f"no plan exits 2 ({code}: {err})")
    bad_plan = os.path.join(tmp, "bad.json")
    with open(bad_plan, "w") as f:
        f.write("{not json")
    code, out, err = run("check-ir", os.path.join(ir, "ffn_n300.ttir.mlir"), "--plan", bad_plan)
    check(code == 1 and "not JSON" in err, f"a plan that is not JSON exits 1 ({code}: {err})")
    code, out, err = run("check-ir", os.path.join(ir, "ffn_n300.ttir.mlir"), "--plan", plan_path, "--mesh", "1x8")
    check(code == 1 and "1x8" in err, f"a mesh the plan lacks exits 1 ({code}: {err})")

    # calibrate: measurements of a known all-reduce ring fit, a profile, plans with it.
    csv = os.path.join(tmp, "m.csv")
    with open(csv, "w") as f:
        f.write("kind,topology,devices,bytes,us\n")
        for n in (2, 4, 8):
            for b in (4096, 262144, 16777216):
                us = 3.0 + 1.0 * n / 2 + 2 * (n - 1) / n * b / 40e3
                f.write(f"all_reduce,ring,{n},{b},{us}\n")
        f.write("kind,flops,bytes,us\ncompute,1e12,1e6,27.0\ncompute,1e9,1e9,4340.0\n")
    profile = os.path.join(tmp, "profile.json")
    code, out, err = run("calibrate", csv, "-o", profile)
    check(code == 0 and os.path.exists(profile), f"calibrate writes a profile ({code}: {err})")
    if os.path.exists(profile):
        p = json.load(open(profile))
        fit = p["collectives"]["all_reduce"]["ring"]
        check(abs(fit["alpha_us"] - 3.0) < 1e-3 and abs(fit["per_step_us"] - 1.0) < 1e-3 and abs(fit["gb_per_s"] - 40.0) < 1e-3, f"the fit is exact on exact data: {fit}")
        check("compute efficiency" in out and "error" in out, "calibrate prints the efficiencies and each row's error")
        code, out, err = run("plan", os.path.join(HERE, "models", "ffn.py"), "--mesh", "t3k", "--hardware", profile, "--format", "json")
        check(code == 0 and json.loads(out)["workload"]["hardware"] == "wormhole-calibrated", f"plan --hardware PROFILE ({code}: {err})")
    bad_csv = os.path.join(tmp, "bad.csv")
    with open(bad_csv, "w") as f:
        f.write("kind,topology,devices,bytes,us\nall_reduce,torus,8,1024,30\n")
    untouched = os.path.join(tmp, "untouched.json")
    code, out, err = run("calibrate", bad_csv, "-o", untouched)
    check(code == 1 and "line 2" in err and not os.path.exists(untouched), f"a bad row exits 1, named, nothing written ({code}: {err})")
    code, out, err = run("plan", os.path.join(HERE, "models", "ffn.py"), "--hardware", os.path.join(tmp, "missing.json"))
    check(code == 2 and "missing.json" in err, f"--hardware with a missing profile exits 2 ({code}: {err})")
    # No measurements: the base's profile, which is the bundled one.
    header = os.path.join(tmp, "header.csv")
    with open(header, "w") as f:
        f.write("kind,topology,devices,bytes,us\n")
    for chip in ("wormhole", "blackhole"):
        out_path = os.path.join(tmp, chip + ".json")
        code, out, err = run("calibrate", header, "--base", chip, "--name", chip, "-o", out_path)
        bundled = json.load(open(os.path.join(ROOT, "analysis", "plan", "profiles", chip + ".json")))
        check(code == 0 and json.load(open(out_path)) == bundled, f"the bundled {chip} profile is the built-in constants")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
