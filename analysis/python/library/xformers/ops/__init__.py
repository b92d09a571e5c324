# shardlens' model of xformers.ops (not the library itself).
from . import fmha
from .fmha import memory_efficient_attention
from .fmha.attn_bias import AttentionBias, BlockDiagonalCausalMask, BlockDiagonalMask, LowerTriangularMask
