#!/usr/bin/env python3
"""Ground truth for `shardlens inspect`: really build a model script's nn.Module
tree with PyTorch, but with every tensor on the "meta" device so that even
100B-parameter configs are instant and use no memory.

Usage:
    /usr/bin/python3 tests/tools/torch_ground_truth.py SCRIPT.py
        [--model EXPR] [--class NAME] [--main]

The script is executed with runpy under run_name "__shardlens_gt__" (so its
`if __name__ == "__main__":` block does not run) unless --main is given.
The root module is:
  * --model EXPR evaluated in the script's globals, if given;
  * else the module-level nn.Module instances that are not a submodule of
    another one: if exactly one, that one; if several, the one named `model`;
  * else NAME() if --class NAME is given;
  * else an error.

Prints JSON on stdout:
  {"model", "modules": [{"name","class"}], "parameters": [{"name","shape"}],
   "buffers": [{"name","shape"}], "total_parameters"}
Errors: a message on stderr and exit status 2.

Torch 1.13 notes (what the meta mode below does and does not catch):
  * torch.overrides.TorchFunctionMode sees torch.* factories (torch.empty,
    zeros, ones, full, rand*, eye, arange, linspace, tensor, ...), Tensor
    methods (new_empty, to, cuda, normal_, ...) and the nn.init functions that
    dispatch (uniform_, normal_, kaiming_*, ...).
  * It does NOT see the legacy constructors torch.Tensor(3, 4) and
    torch.FloatTensor(3): torch.Tensor.__new__ is patched below for the
    size form; torch.FloatTensor & co. are not handled.
  * Data-bearing factories (tensor, as_tensor, arange, range, linspace,
    logspace) stay on the CPU when their result has at most SMALL_NUMEL
    elements, so idioms like `[x.item() for x in torch.linspace(0, r, depth)]`
    work; bigger ones go to meta. An op that mixes such a CPU tensor with a
    meta tensor is retried with everything on meta.
"""

import argparse
import contextlib
import functools
import json
import numbers
import os
import runpy
import sys
import traceback

SMALL_NUMEL = 1 << 16
CPU_FALLBACK_NUMEL = 1 << 24
RUN_NAME = "__shardlens_gt__"


class GroundTruthError(Exception):
    pass


def _fail(msg):
    print("torch_ground_truth: error: %s" % msg, file=sys.stderr)
    sys.exit(2)


# --------------------------------------------------------------------------
# meta-device mode


def _build_mode(torch):
    from torch.overrides import TorchFunctionMode

    size_factories = set()
    for name in ("empty", "zeros", "ones", "full", "rand", "randn", "randint",
                 "randperm", "eye", "empty_strided", "tril_indices",
                 "triu_indices", "bartlett_window", "blackman_window",
                 "hamming_window", "hann_window", "kaiser_window",
                 "zeros_like", "ones_like", "empty_like", "full_like",
                 "rand_like", "randn_like", "randint_like"):
        f = getattr(torch, name, None)
        if f is not None:
            size_factories.add(f)
    for name in ("new_empty", "new_zeros", "new_ones", "new_full",
                 "new_empty_strided"):
        f = getattr(torch.Tensor, name, None)
        if f is not None:
            size_factories.add(f)

    data_factories = set()
    for name in ("tensor", "as_tensor", "asarray", "arange", "range",
                 "linspace", "logspace", "scalar_tensor"):
        f = getattr(torch, name, None)
        if f is not None:
            data_factories.add(f)
    new_tensor = torch.Tensor.new_tensor

    t_to = torch.Tensor.to
    keep_device = {torch.Tensor.cuda, torch.Tensor.cpu}
    for name in ("pin_memory", "share_memory_"):
        f = getattr(torch.Tensor, name, None)
        if f is not None:
            keep_device.add(f)

    def is_meta(x):
        return isinstance(x, torch.Tensor) and x.is_meta

    def to_meta(x):
        if isinstance(x, torch.Tensor) and not x.is_meta:
            return x.to("meta")
        if isinstance(x, (list, tuple)):
            return type(x)(to_meta(y) for y in x)
        return x

    def to_cpu_zeros(x):
        if isinstance(x, torch.Tensor) and x.is_meta:
            out = torch.zeros(x.shape, dtype=x.dtype, device="cpu")
            if x.requires_grad and (x.is_floating_point() or x.is_complex()):
                out.requires_grad_(True)
            return out
        if isinstance(x, (list, tuple)):
            return type(x)(to_cpu_zeros(y) for y in x)
        return x

    def meta_numel(xs):
        n = 0
        for x in xs:
            if isinstance(x, torch.Tensor) and x.is_meta:
                n += x.numel()
            elif isinstance(x, (list, tuple)):
                n += meta_numel(x)
        return n

    def any_tensor(xs, pred):
        for x in xs:
            if isinstance(x, torch.Tensor) and pred(x):
                return True
            if isinstance(x, (list, tuple)) and any_tensor(x, pred):
                return True
        return False

    def to_dtype_only(args, kwargs):
        # Tensor.to(self, [device], [dtype], non_blocking, copy) or
        # Tensor.to(self, other, ...): keep only the dtype part, never move.
        dtype = kwargs.get("dtype")
        for a in list(args[1:]) + [kwargs.get("other"), kwargs.get("tensor")]:
            if isinstance(a, torch.dtype):
                dtype = a
            elif isinstance(a, torch.Tensor):
                dtype = a.dtype
        return dtype

    class MetaMode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in size_factories:
                kwargs["device"] = "meta"
                return func(*args, **kwargs)
            if func in data_factories or func is new_tensor:
                if func in (torch.as_tensor, getattr(torch, "asarray", None)) and \
                        args and isinstance(args[0], torch.Tensor):
                    kwargs.pop("device", None)
                    return func(*args, **kwargs)
                kwargs["device"] = "meta"
                probe = func(*args, **kwargs)
                if isinstance(probe, torch.Tensor) and probe.numel() <= SMALL_NUMEL:
                    kwargs["device"] = "cpu"
                    cpu_args = tuple(a.cpu() if isinstance(a, torch.Tensor) and not a.is_meta else a
                                     for a in args)
                    if not any_tensor(cpu_args, lambda t: t.is_meta):
                        return func(*cpu_args, **kwargs)
                return probe
            if func is t_to:
                dtype = to_dtype_only(args, kwargs)
                if dtype is None or dtype == args[0].dtype:
                    return args[0]
                return func(args[0], dtype)
            if func in keep_device:
                return args[0]
            if "device" in kwargs and kwargs["device"] is not None:
                # any other function that takes a device: force meta.
                kwargs["device"] = "meta"
            try:
                return func(*args, **kwargs)
            except Exception:
                name = getattr(func, "__name__", "")
                if args and is_meta(args[0]) and name.endswith("_") and not name.startswith("__"):
                    # in-place op without a meta kernel: nothing to compute.
                    return args[0]
                if any_tensor(args, lambda t: t.is_meta) or any_tensor(kwargs.values(), lambda t: t.is_meta):
                    if any_tensor(args, lambda t: not t.is_meta) or \
                            any_tensor(kwargs.values(), lambda t: not t.is_meta):
                        # a small CPU tensor met a meta one: all on meta
                        try:
                            margs = tuple(to_meta(a) for a in args)
                            mkwargs = {k: to_meta(v) for k, v in kwargs.items()}
                            return func(*margs, **mkwargs)
                        except Exception:
                            pass
                    # an op with no meta kernel (e.g. _weight_norm in 1.13):
                    # run it on zero-filled CPU stand-ins if they are small,
                    # and put the result back on meta.
                    if meta_numel(args) + meta_numel(kwargs.values()) <= CPU_FALLBACK_NUMEL:
                        cargs = tuple(to_cpu_zeros(a) for a in args)
                        ckwargs = {k: to_cpu_zeros(v) for k, v in kwargs.items()}
                        return to_meta(func(*cargs, **ckwargs))
                raise

    return MetaMode


def _patch_legacy_tensor_ctor(torch):
    """torch.Tensor(3, 4) / torch.Tensor(torch.Size([3, 4])) bypass
    __torch_function__ in 1.13; route the size form to torch.empty (which
    the mode puts on meta)."""
    base_new = torch._C._TensorBase.__new__

    def legacy_new(cls, *args, **kwargs):
        if cls is torch.Tensor and not kwargs and args:
            sizes = args[0] if len(args) == 1 and isinstance(args[0], torch.Size) else args
            if all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
                return torch.empty(*sizes)
        return base_new(cls, *args, **kwargs)

    torch.Tensor.__new__ = staticmethod(legacy_new)


def _patch_init(torch):
    """nn.init.* on meta tensors: run them (the checks on fan-in etc. stay),
    but an op with no meta kernel just leaves the tensor as it is."""
    init = torch.nn.init
    for name in dir(init):
        if not name.endswith("_") or name.startswith("_"):
            continue
        orig = getattr(init, name)
        if not callable(orig):
            continue

        def make(orig):
            @functools.wraps(orig)
            def wrapper(tensor, *args, **kwargs):
                try:
                    return orig(tensor, *args, **kwargs)
                except (NotImplementedError, RuntimeError):
                    if isinstance(tensor, torch.Tensor) and tensor.is_meta:
                        return tensor
                    raise
            return wrapper

        setattr(init, name, make(orig))


def _install_rmsnorm(torch):
    """torch < 2.4 has no nn.RMSNorm: a stand-in with the same signature,
    parameters and class name as torch 2.4's."""
    nn = torch.nn
    if hasattr(nn, "RMSNorm"):
        return

    class RMSNorm(nn.Module):
        __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

        def __init__(self, normalized_shape, eps=None, elementwise_affine=True,
                     device=None, dtype=None):
            factory_kwargs = {"device": device, "dtype": dtype}
            super().__init__()
            if isinstance(normalized_shape, numbers.Integral):
                normalized_shape = (normalized_shape,)
            self.normalized_shape = tuple(normalized_shape)
            self.eps = eps
            self.elementwise_affine = elementwise_affine
            if self.elementwise_affine:
                self.weight = nn.Parameter(torch.empty(self.normalized_shape, **factory_kwargs))
            else:
                self.register_parameter("weight", None)
            self.reset_parameters()

        def reset_parameters(self):
            if self.elementwise_affine:
                nn.init.ones_(self.weight)

        def forward(self, x):
            eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
            dims = tuple(range(-len(self.normalized_shape), 0))
            y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
            return y * self.weight if self.weight is not None else y

        def extra_repr(self):
            return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)

    RMSNorm.__module__ = "torch.nn.modules.normalization"
    nn.RMSNorm = RMSNorm
    nn.modules.RMSNorm = RMSNorm
    nn.modules.normalization.RMSNorm = RMSNorm


# --------------------------------------------------------------------------
# root selection and report


def _pick_root(torch, globs, model_expr, class_name):
    nn = torch.nn
    if model_expr is not None:
        try:
            root = eval(model_expr, globs)
        except Exception as e:
            raise GroundTruthError("--model %r failed: %s: %s" % (model_expr, type(e).__name__, e))
        if not isinstance(root, nn.Module):
            raise GroundTruthError("--model %r is a %s, not an nn.Module" % (model_expr, type(root).__name__))
        return root

    instances = [(k, v) for k, v in globs.items()
                 if isinstance(v, nn.Module) and not k.startswith("__")]
    # one object may be bound to several names: keep it once, but remember
    # whether one of its names is `model`.
    seen = {}
    for k, v in instances:
        seen.setdefault(id(v), [v, []])[1].append(k)
    objs = list(seen.values())
    roots = []
    for v, names in objs:
        contained = False
        for w, _ in objs:
            if w is v:
                continue
            if any(m is v for m in w.modules()):
                contained = True
                break
        if not contained:
            roots.append((v, names))
    if len(roots) == 1:
        return roots[0][0]
    if len(roots) > 1:
        for v, names in roots:
            if "model" in names:
                return v
    if class_name is not None:
        cls = globs.get(class_name)
        if cls is None:
            raise GroundTruthError("--class %s: no such global in the script" % class_name)
        try:
            return cls()
        except Exception as e:
            raise GroundTruthError("--class %s: %s() failed: %s: %s" % (class_name, class_name, type(e).__name__, e))
    if roots:
        raise GroundTruthError("several module-level nn.Module instances and none named `model`: %s"
                               % ", ".join("/".join(n) for _, n in roots))
    raise GroundTruthError("no module-level nn.Module instance (use --model EXPR or --class NAME)")


def _report(root):
    modules = [{"name": n, "class": type(m).__name__} for n, m in root.named_modules() if n != ""]
    params = [(n, p) for n, p in root.named_parameters()]
    buffers = [(n, b) for n, b in root.named_buffers()]
    return {
        "model": type(root).__name__,
        "modules": modules,
        "parameters": [{"name": n, "shape": list(p.shape)} for n, p in params],
        "buffers": [{"name": n, "shape": list(b.shape)} for n, b in buffers],
        "total_parameters": int(sum(p.numel() for _, p in params)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("script")
    ap.add_argument("--model", dest="model_expr", default=None,
                    help="Python expression (in the script's globals) giving the root module")
    ap.add_argument("--class", dest="class_name", default=None,
                    help="class to construct with no arguments when the script has no module-level instance")
    ap.add_argument("--main", action="store_true",
                    help='run the script as __main__ (its `if __name__ == "__main__":` block runs)')
    ap.add_argument("--traceback", action="store_true", help="print the Python traceback on errors")
    opts = ap.parse_args(argv)

    script = os.path.abspath(opts.script)
    if not os.path.isfile(script):
        _fail("no such file: %s" % opts.script)

    try:
        import torch
    except Exception as e:  # pragma: no cover
        _fail("cannot import torch: %s" % e)

    _install_rmsnorm(torch)
    _patch_init(torch)
    _patch_legacy_tensor_ctor(torch)
    MetaMode = _build_mode(torch)

    sys.path.insert(0, os.path.dirname(script))
    # For the workspace loaders (tests/workspaces), shardlens' library models (transformers,
    # diffusers, einops, ...) stand in for libraries this machine does not have, after the real
    # site-packages, as shardlens searches them. The single-file test models keep the machine as it is.
    if os.sep + "workspaces" + os.sep in os.path.abspath(script):
        sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "analysis", "python", "library"))
    sys.argv = [script]
    run_name = "__main__" if opts.main else RUN_NAME
    try:
        # the script's own prints must not pollute the JSON on stdout
        with contextlib.redirect_stdout(sys.stderr), MetaMode():
            globs = runpy.run_path(script, run_name=run_name)
            root = _pick_root(torch, globs, opts.model_expr, opts.class_name)
            report = _report(root)
    except GroundTruthError as e:
        _fail(str(e))
    except SystemExit as e:
        if e.code not in (None, 0):
            _fail("the script exited with status %r" % (e.code,))
        _fail("the script called sys.exit() before a model could be picked")
    except BaseException as e:
        if opts.traceback:
            traceback.print_exc()
        else:
            tb = traceback.extract_tb(e.__traceback__)
            where = ""
            for fr in reversed(tb):
                if os.path.abspath(fr.filename) == script:
                    where = " (at %s:%d)" % (os.path.basename(script), fr.lineno)
                    break
            msg = str(e).strip().splitlines()
            print("torch_ground_truth: %s: %s%s" % (type(e).__name__, msg[0] if msg else "", where),
                  file=sys.stderr)
        _fail("running %s failed" % opts.script)

    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
