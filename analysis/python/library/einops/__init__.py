# shardlens' model of the `einops` package (not the library itself): einops on torch tensors, in plain Python.
from .einops import EinopsError, einsum, parse_shape, rearrange, reduce, repeat
from .packing import pack, unpack

__version__ = "0.8.1"
