# shardlens' model of triton.runtime (not the library itself): @triton.jit, @triton.autotune, Config.
from _shardlens_common.attributes import set_attributes


class JITFunction:
    """A kernel: kernel[grid](*args) would launch it on a GPU; here the launch raises."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            raise NotImplementedError(f"triton kernel {self.__name__} cannot run here (no GPU kernels in shardlens)")

        return launch

    def run(self, *args, **kwargs):
        raise NotImplementedError(f"triton kernel {self.__name__} cannot run here (no GPU kernels in shardlens)")


def jit(fn=None, **kwargs):
    if fn is None:
        def decorator(f):
            return JITFunction(f)

        return decorator
    return JITFunction(fn)


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None):
        set_attributes(self, kwargs=kwargs, num_warps=num_warps, num_stages=num_stages, num_ctas=num_ctas,
                       maxnreg=maxnreg, pre_hook=pre_hook)


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, warmup=None, rep=None,
             use_cuda_graph=False, do_bench=None):
    def decorator(fn):
        return fn

    return decorator


def heuristics(values):
    def decorator(fn):
        return fn

    return decorator
