# shardlens' model of the `triton` package (not the library itself): kernels can be defined and decorated, but not
# launched; a launch raises, so callers see that the kernel path is unavailable.
from . import language
from .runtime import Config, JITFunction, autotune, heuristics, jit


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n):
    n = n - 1
    n = n | (n >> 1)
    n = n | (n >> 2)
    n = n | (n >> 4)
    n = n | (n >> 8)
    n = n | (n >> 16)
    n = n | (n >> 32)
    return n + 1


__version__ = "3.1.0"
