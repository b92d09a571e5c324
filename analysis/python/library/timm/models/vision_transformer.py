# shardlens' model of timm.models.vision_transformer (not the library itself): the layers DiT imports from it.
from ..layers import Attention, DropPath, Mlp, PatchEmbed, trunc_normal_
