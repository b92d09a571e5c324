# shardlens' model of xformers.ops (not the library itself): the attention entry points model code imports from here.
from . import fmha
from .fmha import LowerTriangularMask, memory_efficient_attention
