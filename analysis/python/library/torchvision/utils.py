# shardlens' model of torchvision.utils (not the library itself): the private helpers model files use.
import collections.abc
from itertools import repeat


def _log_api_usage_once(obj):
    pass


def _make_ntuple(x, n):
    """(x, x, ..., x) n times, or tuple(x) when x is already iterable."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(repeat(x, n))
