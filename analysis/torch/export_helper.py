#!/usr/bin/env python3
"""shardlens export helper: build a model script's root nn.Module with PyTorch and save it as
TorchScript, so that `shardlens-graph` (LibTorch, no Python) can read the exact graph.

Run by `shardlens export` with the user's interpreter:

    python3 export_helper.py SCRIPT.py -o OUT.pt [--model EXPR] [--root-hint EXPR ...]
        [--weights meta|random] [--batch N] [--seq N] [--method auto|script|trace]
    python3 export_helper.py --batch-file JOBS.json      (several exports in one process; tests)

* The script is imported with runpy under run_name "__shardlens_export__": its
  `if __name__ == "__main__":` block does not run.
* Root module: --model EXPR (evaluated in the script's namespace); else the module-level
  nn.Module instance (`model` wins when there are several, else the last one); else each
  --root-hint in turn (`shardlens export` passes the static front end's choice, e.g. `GPT()` or
  the text of the expression that builds the instance inside `__main__`); else the nn.Module class
  defined in the script whose constructor needs no arguments and that has the most parameters.
* --weights meta (default): every tensor lives on the "meta" device (no memory, no values), which
  torch 1.13 supports through a TorchFunctionMode that forces factory functions to meta (it has no
  `with torch.device("meta")`). torch.jit.save writes meta tensors as zero-byte records and
  torch.jit.load (Python and LibTorch) gives them back as meta tensors with their shapes, dtypes
  and sharing (tied weights stay one tensor), so no side file is needed for shapes.
  --weights random builds real tensors with the script's own initialisation (for `verify` on
  reduced configs).
* torch.jit.script first (it keeps the source ranges of the script); torch.jit.trace with an
  example input from the workload (--batch, --seq) when scripting fails.
* Metadata for shardlens-graph goes into the archive as the extra file `shardlens.json`.

On success one JSON object is printed on stdout: {"ok": true, "output", "method", "model",
"root", "parameters", "notes", "script_error"}. On failure a message on stderr, a JSON object
{"ok": false, "kind", "message"} on stdout, and the exit status says what failed:
  2 usage, 3 torch cannot be imported, 4 the script raised (message names the last frame of the
  traceback inside the script), 5 no root module found (or --model failed), 6 scripting and
  tracing both failed (message says why each failed), 7 the TorchScript file could not be written.
"""

import argparse
import contextlib
import functools
import hashlib
import inspect
import io
import json
import numbers
import os
import runpy
import sys
import traceback

RUN_NAME = "__shardlens_export__"
SMALL_NUMEL = 1 << 16
CPU_FALLBACK_NUMEL = 1 << 24
FORMAT_VERSION = 1

EXIT_USAGE, EXIT_NO_TORCH, EXIT_SCRIPT_RAISED, EXIT_NO_MODULE, EXIT_EXPORT_FAILED, EXIT_WRITE = 2, 3, 4, 5, 6, 7


class ExportError(Exception):
    def __init__(self, code, kind, message):
        super().__init__(message)
        self.code = code
        self.kind = kind
        self.message = message


# --------------------------------------------------------------------------------------------
# torch 1.13 compatibility: what model scripts written for newer torch call


SDPA_SOURCE = '''
import math
from typing import Optional
import torch

def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 attn_mask: Optional[torch.Tensor] = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None) -> torch.Tensor:
    L = query.size(-2)
    S = key.size(-2)
    if scale is None:
        scale_factor = 1.0 / math.sqrt(float(query.size(-1)))
    else:
        scale_factor = scale
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(S - L)
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = torch.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = torch.dropout(weights, dropout_p, True)
    return torch.matmul(weights, value)
'''


def _install_sdpa(torch):
    """torch < 2.0 has no F.scaled_dot_product_attention: a scriptable reference implementation
    under the same name (shardlens-graph recognises the function by its name and reads it as one
    attention op)."""
    F = torch.nn.functional
    if hasattr(F, "scaled_dot_product_attention"):
        return False
    import types
    mod = types.ModuleType("shardlens_sdpa")
    mod.__file__ = "<shardlens_sdpa>"
    exec(compile(SDPA_SOURCE, "<shardlens_sdpa>", "exec"), mod.__dict__)
    sys.modules["shardlens_sdpa"] = mod
    # TorchScript reads a function's source through inspect: keep it where inspect finds it.
    import linecache
    linecache.cache["<shardlens_sdpa>"] = (len(SDPA_SOURCE), None, SDPA_SOURCE.splitlines(True), "<shardlens_sdpa>")
    # Compiled, so that a traced graph keeps it as one call (a Python function would dissolve into
    # its matmuls and softmax); scripted models compile it either way.
    try:
        F.scaled_dot_product_attention = torch.jit.script(mod.scaled_dot_product_attention)
    except Exception:  # noqa: BLE001 - fall back to the plain function
        F.scaled_dot_product_attention = mod.scaled_dot_product_attention
    return True


def _install_rmsnorm(torch):
    """torch < 2.4 has no nn.RMSNorm: a scriptable stand-in with the same signature, parameters
    and class name as torch 2.4's."""
    nn = torch.nn
    if hasattr(nn, "RMSNorm"):
        return False
    from typing import List, Optional

    class RMSNorm(nn.Module):
        __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
        normalized_shape: List[int]
        eps: Optional[float]
        elementwise_affine: bool

        def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
            factory_kwargs = {"device": device, "dtype": dtype}
            super().__init__()
            if isinstance(normalized_shape, numbers.Integral):
                normalized_shape = (normalized_shape,)
            self.normalized_shape = list(normalized_shape)
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

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            eps = self.eps
            if eps is None:
                eps = 1e-6
            dims: List[int] = []
            for i in range(len(self.normalized_shape)):
                dims.append(i - len(self.normalized_shape))
            y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
            w = self.weight
            if w is not None:
                y = y * w
            return y

        def extra_repr(self):
            return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)

    RMSNorm.__module__ = "torch.nn.modules.normalization"
    nn.RMSNorm = RMSNorm
    nn.modules.RMSNorm = RMSNorm
    nn.modules.normalization.RMSNorm = RMSNorm
    return True


# --------------------------------------------------------------------------------------------
# the meta device for everything the script builds (torch 1.13 has no `with torch.device("meta")`)


def _build_meta_mode(torch):
    from torch.overrides import TorchFunctionMode

    size_factories = set()
    for name in ("empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "eye", "empty_strided",
                 "tril_indices", "triu_indices", "bartlett_window", "blackman_window", "hamming_window",
                 "hann_window", "kaiser_window", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
                 "randn_like", "randint_like"):
        f = getattr(torch, name, None)
        if f is not None:
            size_factories.add(f)
    for name in ("new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided"):
        f = getattr(torch.Tensor, name, None)
        if f is not None:
            size_factories.add(f)
    data_factories = set()
    for name in ("tensor", "as_tensor", "asarray", "arange", "range", "linspace", "logspace", "scalar_tensor"):
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
                if func in (torch.as_tensor, getattr(torch, "asarray", None)) and args and \
                        isinstance(args[0], torch.Tensor):
                    kwargs.pop("device", None)
                    return func(*args, **kwargs)
                kwargs["device"] = "meta"
                probe = func(*args, **kwargs)
                if isinstance(probe, torch.Tensor) and probe.numel() <= SMALL_NUMEL:
                    # small value tables (schedules, RoPE frequencies) keep their values on the CPU
                    kwargs["device"] = "cpu"
                    cpu_args = tuple(a.cpu() if isinstance(a, torch.Tensor) and not a.is_meta else a for a in args)
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
                kwargs["device"] = "meta"
            try:
                return func(*args, **kwargs)
            except Exception:
                name = getattr(func, "__name__", "")
                if args and isinstance(args[0], torch.Tensor) and args[0].is_meta and name.endswith("_") and \
                        not name.startswith("__"):
                    return args[0]  # in-place op without a meta kernel: nothing to compute
                if any_tensor(args, lambda t: t.is_meta) or any_tensor(kwargs.values(), lambda t: t.is_meta):
                    if any_tensor(args, lambda t: not t.is_meta) or any_tensor(kwargs.values(), lambda t: not t.is_meta):
                        try:
                            return func(*tuple(to_meta(a) for a in args), **{k: to_meta(v) for k, v in kwargs.items()})
                        except Exception:
                            pass
                    if meta_numel(args) + meta_numel(kwargs.values()) <= CPU_FALLBACK_NUMEL:
                        cargs = tuple(to_cpu_zeros(a) for a in args)
                        ckwargs = {k: to_cpu_zeros(v) for k, v in kwargs.items()}
                        return to_meta(func(*cargs, **ckwargs))
                raise

    return MetaMode


def _patch_init(torch):
    """nn.init.* on meta tensors: run them, but an op with no meta kernel leaves the tensor."""
    init = torch.nn.init
    if getattr(init, "_shardlens_patched", False):
        return
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
    init._shardlens_patched = True


def _patch_legacy_tensor_ctor(torch):
    """torch.Tensor(3, 4) bypasses __torch_function__ in 1.13: route the size form to torch.empty."""
    if getattr(torch.Tensor, "_shardlens_patched", False):
        return
    base_new = torch._C._TensorBase.__new__

    def legacy_new(cls, *args, **kwargs):
        if cls is torch.Tensor and not kwargs and args:
            sizes = args[0] if len(args) == 1 and isinstance(args[0], torch.Size) else args
            if all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
                return torch.empty(*sizes)
        return base_new(cls, *args, **kwargs)

    torch.Tensor.__new__ = staticmethod(legacy_new)
    torch.Tensor._shardlens_patched = True


# --------------------------------------------------------------------------------------------
# running the script and choosing the root


def _last_script_frame(exc, script):
    tb = traceback.extract_tb(exc.__traceback__)
    for fr in reversed(tb):
        if os.path.abspath(fr.filename) == script:
            line = (fr.line or "").strip()
            return "%s:%d in %s%s" % (os.path.basename(script), fr.lineno, fr.name, (": " + line) if line else "")
    if tb:
        fr = tb[-1]
        return "%s:%d in %s" % (fr.filename, fr.lineno, fr.name)
    return ""


def _exception_text(e):
    msg = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, msg[0] if msg else "")


def _run_script(script):
    sys.argv = [script]
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return runpy.run_path(script, run_name=RUN_NAME)
    except SystemExit as e:
        if e.code in (None, 0):
            raise ExportError(EXIT_SCRIPT_RAISED, "script-raised",
                              "the script called sys.exit() while being imported")
        raise ExportError(EXIT_SCRIPT_RAISED, "script-raised", "the script exited with status %r while being imported" % (e.code,))
    except BaseException as e:  # noqa: B902 - anything the user's code raises
        where = _last_script_frame(e, script)
        raise ExportError(EXIT_SCRIPT_RAISED, "script-raised",
                          "the script raised %s%s" % (_exception_text(e), (" (at %s)" % where) if where else ""))


def _module_level_root(torch, globs):
    nn = torch.nn
    instances = [(k, v) for k, v in globs.items() if isinstance(v, nn.Module) and not k.startswith("__")]
    seen = {}
    for k, v in instances:
        seen.setdefault(id(v), [v, []])[1].append(k)
    objs = list(seen.values())
    tops = []
    for v, names in objs:
        if not any(w is not v and any(m is v for m in w.modules()) for w, _ in objs):
            tops.append((v, names))
    if not tops:
        return None, None
    for v, names in tops:
        if "model" in names:
            return v, "model"
    v, names = tops[-1]
    return v, names[0]


def _evaluate(torch, expr, globs, what):
    try:
        with contextlib.redirect_stdout(sys.stderr):
            value = eval(expr, globs)
    except BaseException as e:  # noqa: B902
        raise ExportError(EXIT_NO_MODULE, "no-module", "%s %r raised %s" % (what, expr, _exception_text(e)))
    if not isinstance(value, torch.nn.Module):
        raise ExportError(EXIT_NO_MODULE, "no-module", "%s %r is a %s, not an nn.Module" % (what, expr, type(value).__name__))
    return value


def _class_root(torch, globs):
    """The nn.Module class defined in the script that builds without arguments and has the most
    parameters."""
    best, best_count, considered = None, -1, []
    for name, v in list(globs.items()):
        if not (isinstance(v, type) and issubclass(v, torch.nn.Module) and v.__module__ == RUN_NAME):
            continue
        try:
            with contextlib.redirect_stdout(sys.stderr):
                inst = v()
        except BaseException as e:  # noqa: B902
            considered.append("%s (%s)" % (name, _exception_text(e)))
            continue
        count = sum(p.numel() for p in inst.parameters())
        if count >= best_count:
            best, best_count = (inst, name + "()"), count
    return best, considered


def _choose_root(torch, globs, model_expr, hints):
    if model_expr:
        return _evaluate(torch, model_expr, globs, "--model"), model_expr, []
    root, name = _module_level_root(torch, globs)
    if root is not None:
        return root, name, []
    errors = []
    for hint in hints:
        try:
            return _evaluate(torch, hint, globs, "the static front end's root"), hint, []
        except ExportError as e:
            errors.append(e.message)
    found, considered = _class_root(torch, globs)
    if found:
        return found[0], found[1], ["root chosen among the script's classes: " + found[1]]
    msg = "no model found: the script (imported without running its __main__ block) assigns no nn.Module " \
          "instance at module level"
    if errors:
        msg += "; " + "; ".join(errors)
    if considered:
        msg += "; no nn.Module class builds without arguments: " + ", ".join(considered)
    msg += '; pass --model "Class(args)"'
    raise ExportError(EXIT_NO_MODULE, "no-module", msg)


# --------------------------------------------------------------------------------------------
# example inputs (tracing)


def _example_inputs(torch, root, batch, seq, spatial, device):
    """Candidate example inputs for forward(), most likely first: token ids when the model has an
    embedding, features for the first linear / norm, images for the first conv."""
    nn = torch.nn
    cands = []
    for _, m in root.named_modules():
        if isinstance(m, nn.Embedding):
            ids = torch.zeros(batch, seq, dtype=torch.long, device=device)
            cands.append(("token ids", ids))
            break
    for _, m in root.named_modules():
        if isinstance(m, nn.Linear):
            cands.append(("features of %d" % m.in_features, torch.zeros(batch, seq, m.in_features, device=device)))
            break
        if isinstance(m, (nn.LayerNorm,)) and len(m.normalized_shape) == 1:
            cands.append(("features of %d" % m.normalized_shape[0],
                          torch.zeros(batch, seq, m.normalized_shape[0], device=device)))
            break
        w = getattr(m, "weight", None)
        if isinstance(m, nn.Conv2d):
            cands.append(("images with %d channels" % m.in_channels,
                          torch.zeros(batch, m.in_channels, spatial, spatial, device=device)))
            break
        if isinstance(m, nn.Conv1d):
            cands.append(("sequences with %d channels" % m.in_channels,
                          torch.zeros(batch, m.in_channels, max(seq, 16), device=device)))
            break
        if w is not None and isinstance(w, torch.Tensor) and w.dim() == 1:
            cands.append(("features of %d" % w.shape[0], torch.zeros(batch, seq, w.shape[0], device=device)))
            break
    return cands


def _forward_arity(root):
    try:
        sig = inspect.signature(root.forward)
    except (TypeError, ValueError):
        return 1
    n = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            n += 1
    return n


# --------------------------------------------------------------------------------------------
# export


def _python_class_names(root):
    return [{"name": n, "class": type(m).__name__} for n, m in root.named_modules()]


def _export_one(torch, job, meta_mode):
    script = os.path.abspath(job["script"])
    out = job["output"]
    weights = job.get("weights", "meta")
    method = job.get("method", "auto")
    batch, seq = int(job.get("batch", 1)), int(job.get("seq", 8))
    if not os.path.isfile(script):
        raise ExportError(EXIT_USAGE, "usage", "no such file: %s" % job["script"])
    notes = []
    script_dir = os.path.dirname(script)
    if script_dir not in sys.path:
        sys.path.insert(0, script_dir)
    # Random weights of a root given by --model (a reduced config, mostly): the script's own
    # module-level instances (often full size) are still built on meta, only the root is real.
    meta_import = weights == "meta" or bool(job.get("model"))
    with meta_mode() if meta_import else contextlib.nullcontext():
        globs = _run_script(script)
    with meta_mode() if weights == "meta" else contextlib.nullcontext():
        root, root_expr, more = _choose_root(torch, globs, job.get("model"), job.get("root_hints", []))
    notes += more
    root.eval()
    device = "meta" if weights == "meta" else "cpu"

    scripted, script_error, trace_error, used, example = None, None, None, None, None
    if method in ("auto", "script"):
        try:
            with contextlib.redirect_stdout(sys.stderr):
                scripted = torch.jit.script(root)
            used = "script"
        except BaseException as e:  # noqa: B902
            text = str(e).strip()
            script_error = _exception_text(e) if len(text) < 2000 else text[:2000]
            script_error = text if text else _exception_text(e)
    if scripted is None and method in ("auto", "trace"):
        errors = []
        arity = _forward_arity(root)
        for what, x in _example_inputs(torch, root, batch, seq, int(job.get("spatial", 64)), device):
            try:
                inline = getattr(torch._C, "_jit_set_inline_everything_mode", None)
                with contextlib.redirect_stdout(sys.stderr), torch.no_grad():
                    inputs = (x,) + tuple(x for _ in range(max(0, arity - 1)))
                    # Compiled functions the forward calls (the attention shim) stay calls.
                    if inline:
                        inline(False)
                    try:
                        scripted = torch.jit.trace(root, inputs, check_trace=False)
                    finally:
                        if inline:
                            inline(True)
                used = "trace"
                # seq_dims: which dim of each input is the sequence (shardlens-graph puts the
                # workload's tokens there); None for images.
                seq_dim = 1 if what.startswith(("token ids", "features")) else None
                example = {"what": what, "shapes": [list(i.shape) for i in inputs],
                           "dtypes": [str(i.dtype).replace("torch.", "") for i in inputs],
                           "batch": batch, "seq": seq, "seq_dims": [seq_dim for _ in inputs]}
                break
            except BaseException as e:  # noqa: B902
                errors.append("with %s %s: %s" % (what, list(x.shape), _short(_exception_text(e))))
        if scripted is None:
            trace_error = "; ".join(errors) if errors else "no example input could be made for forward() " \
                "(no embedding, linear, norm or convolution tells what it reads)"
    if scripted is None:
        parts = []
        if script_error:
            parts.append("torch.jit.script failed: " + _short(script_error, 600))
        if trace_error:
            parts.append("torch.jit.trace failed: " + trace_error)
        raise ExportError(EXIT_EXPORT_FAILED, "export-failed", "; ".join(parts))
    if script_error:
        notes.append("torch.jit.script failed, so the graph was traced (shapes of that example input; "
                     "control flow as it ran): " + _short(script_error, 300))

    with open(script, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    params = [(n, p) for n, p in root.named_parameters()]
    info = {
        "format": FORMAT_VERSION,
        "source": script,
        "source_sha256": digest,
        "source_fnv1a64": _fnv1a64(data),
        "method": used,
        "weights": weights,
        "model": type(root).__name__,
        "root": root_expr,
        "torch": torch.__version__,
        "modules": _python_class_names(root),
        "parameters": [{"name": n, "shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", "")} for n, p in params],
        "buffers": [{"name": n, "shape": list(b.shape), "dtype": str(b.dtype).replace("torch.", "")}
                    for n, b in root.named_buffers()],
        "example_inputs": example,
        "notes": notes,
        "script_error": script_error,
    }
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out)) or ".", exist_ok=True)
        torch.jit.save(scripted, out, _extra_files={"shardlens.json": json.dumps(info)})
    except BaseException as e:  # noqa: B902
        with contextlib.suppress(OSError):
            os.unlink(out)  # no half-written archive left behind
        raise ExportError(EXIT_WRITE, "write-failed", "could not write %s: %s" % (out, _exception_text(e)))
    return {"ok": True, "output": out, "method": used, "model": info["model"], "root": root_expr,
            "parameters": len(params), "notes": notes, "script_error": script_error}


def _fnv1a64(data):
    """The hash shardlens itself computes of the script (to tell a stale export)."""
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def _short(text, limit=400):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def _import_torch():
    try:
        import torch  # noqa: F401
    except BaseException as e:  # noqa: B902
        raise ExportError(EXIT_NO_TORCH, "no-torch", "cannot import torch with %s: %s" % (sys.executable, _exception_text(e)))
    return torch


def _prepare(torch):
    _install_rmsnorm(torch)
    _install_sdpa(torch)
    _patch_init(torch)
    _patch_legacy_tensor_ctor(torch)
    return _build_meta_mode(torch)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("script", nargs="?")
    ap.add_argument("-o", "--output")
    ap.add_argument("--model", default=None)
    ap.add_argument("--root-hint", action="append", default=[])
    ap.add_argument("--weights", choices=("meta", "random"), default="meta")
    ap.add_argument("--method", choices=("auto", "script", "trace"), default="auto")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--spatial", type=int, default=64)
    ap.add_argument("--batch-file", help="JSON list of jobs ({script, output, model, ...}); one result per line")
    ap.add_argument("--seed", type=int, default=0)
    try:
        opts = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0

    def fail(e):
        print("shardlens export: %s" % e.message, file=sys.stderr)
        print(json.dumps({"ok": False, "kind": e.kind, "message": e.message}))
        sys.stdout.flush()
        return e.code

    try:
        torch = _import_torch()
    except ExportError as e:
        return fail(e)
    torch.manual_seed(opts.seed)
    meta_mode = _prepare(torch)

    if opts.batch_file:
        with open(opts.batch_file, encoding="utf-8") as f:
            jobs = json.load(f)
        worst = 0
        for job in jobs:
            saved_path, saved_modules = list(sys.path), set(sys.modules)
            try:
                result = _export_one(torch, job, meta_mode)
            except ExportError as e:
                result = {"ok": False, "kind": e.kind, "message": e.message, "code": e.code}
                worst = max(worst, e.code)
            result["script"] = job["script"]
            print(json.dumps(result))
            sys.stdout.flush()
            # modules a script imported from its own directory must not leak into the next one
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules:
                mod = sys.modules.get(name)
                f = getattr(mod, "__file__", None) or ""
                if not f.startswith(os.path.dirname(torch.__file__)):
                    sys.modules.pop(name, None)
        return 0 if worst == 0 else 1

    if not opts.script or not opts.output:
        print("shardlens export: usage: export_helper.py SCRIPT.py -o OUT.pt [--model EXPR]", file=sys.stderr)
        return EXIT_USAGE
    job = {"script": opts.script, "output": opts.output, "model": opts.model, "root_hints": opts.root_hint,
           "weights": opts.weights, "method": opts.method, "batch": opts.batch, "seq": opts.seq,
           "spatial": opts.spatial}
    try:
        result = _export_one(torch, job, meta_mode)
    except ExportError as e:
        return fail(e)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
