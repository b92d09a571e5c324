#!/usr/bin/env python3
"""Self-test of tests/tools/torch_ground_truth.py (no shardlens needed).

Usage: /usr/bin/python3 tests/tools/selftest_ground_truth.py
Prints one line per case and a closing `N passed, N failed`; exit 1 on failure.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GT = os.path.join(HERE, "torch_ground_truth.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def run(tmp, source, *args):
    path = os.path.join(tmp, "script_%d.py" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        f.write(textwrap.dedent(source))
    p = subprocess.run([PYTHON, GT, path] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    data = json.loads(p.stdout) if p.returncode == 0 else None
    return p.returncode, data, p.stderr


def names(data, key="parameters"):
    return [x["name"] for x in data[key]]


@case
def huge_layers_are_instant_and_use_no_memory(tmp):
    start = time.time()
    rc, d, err = run(tmp, """
        import torch
        from torch import nn
        class Huge(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(100000, 100000)            # 40 GB in fp32
                self.emb = nn.Embedding(1000000, 16384)          # 65 GB in fp32
                self.legacy = nn.Parameter(torch.Tensor(50000, 50000))
                nn.init.trunc_normal_(self.legacy, std=0.02)
                nn.init.orthogonal_(self.proj.weight)
                self.proj.weight.data.normal_(mean=0.0, std=0.02)
                self.register_buffer("mask", torch.tril(torch.ones(65536, 65536)))
        model = Huge()
    """)
    elapsed = time.time() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    assert rc == 0, err
    assert d["total_parameters"] == 100000 * 100000 + 100000 + 1000000 * 16384 + 50000 * 50000, d
    assert elapsed < 60, "took %.1fs" % elapsed
    assert peak_mb < 2048, "peak RSS %.0f MB" % peak_mb


@case
def rmsnorm_stand_in(tmp):
    rc, d, err = run(tmp, """
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.RMSNorm(64)
                self.b = nn.RMSNorm([4, 8], eps=1e-6)
                self.c = nn.RMSNorm(16, elementwise_affine=False)
        model = M()
    """)
    assert rc == 0, err
    assert d["parameters"] == [{"name": "a.weight", "shape": [64]}, {"name": "b.weight", "shape": [4, 8]}], d
    assert [m["class"] for m in d["modules"]] == ["RMSNorm"] * 3, d


@case
def root_selection(tmp):
    src = """
        from torch import nn
        class Net(nn.Module):
            def __init__(self, d=4):
                super().__init__()
                self.l = nn.Linear(d, d)
        class Wrap(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner
    """
    src = textwrap.dedent(src) + "%s\n"
    rc, d, err = run(tmp, src % "inner = Net(2)\nwrapped = Wrap(inner)")
    assert rc == 0 and d["model"] == "Wrap" and d["total_parameters"] == 6, (rc, d, err)
    rc, d, err = run(tmp, src % "a = Net(2)\nmodel = Net(3)")
    assert rc == 0 and d["total_parameters"] == 12, (rc, d, err)
    rc, d, err = run(tmp, src % "a = Net(2)\nb = Net(3)")
    assert rc == 2 and "none named `model`" in err, (rc, err)
    rc, d, err = run(tmp, src % "a = Net(2)\nb = Net(3)", "--class", "Net")
    assert rc == 0 and d["total_parameters"] == 20, (rc, d, err)
    rc, d, err = run(tmp, src % "", "--class", "Net")
    assert rc == 0 and d["total_parameters"] == 20, (rc, d, err)
    rc, d, err = run(tmp, src % "", "--model", "Wrap(Net(8))")
    assert rc == 0 and d["model"] == "Wrap" and d["total_parameters"] == 72, (rc, d, err)
    rc, d, err = run(tmp, src % "")
    assert rc == 2 and "no module-level" in err, (rc, err)


@case
def main_block_only_with_flag(tmp):
    src = """
        from torch import nn
        print("noise on stdout")
        if __name__ == "__main__":
            model = nn.Linear(3, 5)
    """
    rc, d, err = run(tmp, src)
    assert rc == 2, (rc, d)
    rc, d, err = run(tmp, src, "--main")
    assert rc == 0 and d["total_parameters"] == 20 and "noise" in err, (rc, d, err)


@case
def tied_and_shared_are_listed_once(tmp):
    rc, d, err = run(tmp, """
        from torch import nn
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(10, 4)
                self.shared = nn.Linear(4, 4)
                self.again = self.shared
                self.head = nn.Linear(4, 10, bias=False)
                self.head.weight = self.wte.weight
        model = LM()
    """)
    assert rc == 0, err
    assert names(d) == ["wte.weight", "shared.weight", "shared.bias"], d
    assert names(d, "modules") == ["wte", "shared", "head"], d
    assert d["total_parameters"] == 40 + 20, d


@case
def data_factories_stay_usable(tmp):
    rc, d, err = run(tmp, """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self, depth=4, rate=0.3):
                super().__init__()
                dpr = [x.item() for x in torch.linspace(0, rate, depth)]
                self.blocks = nn.ModuleList([nn.Dropout(p) if p > 0 else nn.Identity() for p in dpr])
                self.register_buffer("pos", torch.arange(16).expand((1, -1)), persistent=False)
                self.register_buffer("version", torch.Tensor([3]))
        model = M()
    """)
    assert rc == 0, err
    assert [m["class"] for m in d["modules"]][1:] == ["Identity", "Dropout", "Dropout", "Dropout"], d
    assert d["buffers"] == [{"name": "pos", "shape": [1, 16]}, {"name": "version", "shape": [1]}], d


@case
def script_errors_exit_2(tmp):
    rc, d, err = run(tmp, """
        from torch import nn
        model = nn.Linear(3, 4, bogus=True)
    """)
    assert rc == 2 and "bogus" in err, (rc, err)


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for fn in CASES:
            sub = os.path.join(tmp, fn.__name__)
            os.mkdir(sub)
            try:
                fn(sub)
            except AssertionError as e:
                failed += 1
                print("FAIL %s: %s" % (fn.__name__, str(e)[:800]))
            else:
                passed += 1
                print("ok %s" % fn.__name__)
            sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
