#!/usr/bin/env python3
"""Run a model script that carries sharding annotations, under real PyTorch on the meta device,
with the recording torch_xla stand-in of the emitters' tests (tests/emit/fake_xla: it checks every
call as an SPMD run would, including xr.use_spmd() and CONVERT_SHLO_TO_SHARDY=1 before any mark),
and print which parameters were marked with which spec.

Usage:
    /usr/bin/python3 tests/lsp/harness/run_sharded.py SCRIPT.py [--devices N] [--model EXPR]
        [--apply-sharding ROOT_EXPR --mesh-shape RxC] [--load-shard-spec]

  * default: the script runs as __main__ (its annotation block runs where it stands); the root
    module is picked as tests/tools/torch_ground_truth.py picks it (or --model EXPR).
  * --apply-sharding ROOT_EXPR: the script defines apply_sharding(model, mesh) instead; the
    harness builds ROOT_EXPR and the mesh (the script's make_mesh() when it defines one, else a
    Mesh of shape RxC with axes ("batch", "model")) and calls it.
  * --load-shard-spec: the script defines load_shard_spec(model) (tt-forge-models convention,
    with get_mesh_config(num_devices) when present); the harness applies the returned dict with
    xs.mark_sharding as the tt-forge-models runner does.

Prints JSON: {"model", "parameters": [names], "marks": [{"name", "shape", "spec", "mesh"}],
"meshes", "use_spmd", "calls"}. A mark on a tensor that is not a
parameter of the root has "name": null. Errors: message + traceback on stderr, exit status 2.
"""

import argparse
import contextlib
import json
import os
import runpy
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.abspath(os.path.join(HERE, "..", ".."))
TOOLS = os.path.join(TESTS, "tools")
FAKE_XLA = os.path.join(TESTS, "emit", "fake_xla")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("script")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--model", default=None)
    ap.add_argument("--apply-sharding", dest="apply_root", default=None)
    ap.add_argument("--mesh-shape", default="1x8")
    ap.add_argument("--load-shard-spec", action="store_true")
    opts = ap.parse_args(argv)

    os.environ["FAKE_XLA_DEVICES"] = str(opts.devices)
    os.environ.pop("CONVERT_SHLO_TO_SHARDY", None)
    sys.path.insert(0, FAKE_XLA)  # the torch_xla stand-in wins over anything installed
    sys.path.insert(1, TOOLS)
    import torch  # noqa: F401
    import torch_ground_truth as gt
    import torch_xla
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr
    assert os.path.abspath(torch_xla.__file__).startswith(FAKE_XLA), "the real torch_xla was imported"

    gt._install_rmsnorm(torch)
    gt._patch_init(torch)
    gt._patch_legacy_tensor_ctor(torch)
    MetaMode = gt._build_mode(torch)

    script = os.path.abspath(opts.script)
    sys.path.insert(2, os.path.dirname(script))
    sys.argv = [script]
    calls = []
    try:
        with contextlib.redirect_stdout(sys.stderr), MetaMode():
            globs = runpy.run_path(script, run_name="__main__")
            if opts.apply_root:
                root = eval(opts.apply_root, globs)
                fn = globs.get("apply_sharding")
                if not callable(fn):
                    raise RuntimeError("the script defines no apply_sharding(model, mesh)")
                if callable(globs.get("make_mesh")):
                    mesh = globs["make_mesh"]()
                    calls.append("make_mesh")
                else:
                    r, c = (int(x) for x in opts.mesh_shape.split("x"))
                    import numpy as np
                    mesh = xs.Mesh(np.arange(r * c), (r, c), ("batch", "model"))
                fn(root, mesh)
                calls.append("apply_sharding")
            else:
                root = gt._pick_root(torch, globs, opts.model, None)
            if opts.load_shard_spec:
                fn = globs.get("load_shard_spec")
                if not callable(fn):
                    raise RuntimeError("the script defines no load_shard_spec(model)")
                specs = fn(root)
                if not isinstance(specs, dict):
                    raise RuntimeError("load_shard_spec returned %s, not a dict" % type(specs).__name__)
                calls.append("load_shard_spec")
                shape, axes = (1, opts.devices), ("batch", "model")
                if callable(globs.get("get_mesh_config")):
                    shape, axes = globs["get_mesh_config"](opts.devices)
                    calls.append("get_mesh_config")
                import numpy as np
                os.environ["CONVERT_SHLO_TO_SHARDY"] = "1"
                xr.use_spmd()
                mesh = xs.Mesh(np.arange(opts.devices), tuple(shape), tuple(axes))
                for t, spec in specs.items():
                    xs.mark_sharding(t, mesh, tuple(spec))
    except SystemExit as e:
        print("run_sharded: the script called sys.exit(%r)" % (e.code,), file=sys.stderr)
        return 2
    except BaseException:
        traceback.print_exc()
        print("run_sharded: running %s failed" % opts.script, file=sys.stderr)
        return 2

    names = {}
    order = []
    for n, p in root.named_parameters():
        names.setdefault(id(p), n)
        order.append(n)
    def entry(e):
        if isinstance(e, (tuple, list)):
            return list(e) if len(e) > 1 else e[0]
        return e

    rec = torch_xla.RECORD
    marks = []
    for t, mesh, spec in rec.marks:
        marks.append({"name": names.get(id(t)), "shape": list(t.shape), "spec": [entry(e) for e in spec],
                      "mesh": {"shape": list(mesh.mesh_shape), "axes": list(mesh.axis_names or [])}})
    out = {
        "model": type(root).__name__,
        "parameters": order,
        "marks": marks,
        "meshes": [{"shape": list(shape), "axes": list(axes or []), "devices": len(ids)} for ids, shape, axes in rec.meshes],
        "use_spmd": bool(rec.spmd),
        "calls": calls,
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
