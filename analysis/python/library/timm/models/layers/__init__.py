# shardlens' model of timm.models.layers (not the library itself): the deprecated alias of timm.layers.
from ...layers import Attention, DropPath, Mlp, PatchEmbed, to_2tuple, trunc_normal_
