# shardlens' model of timm.layers (not the library itself): Mlp, PatchEmbed, Attention, DropPath and helpers.
from .attention import Attention
from .config import use_fused_attn
from .drop import DropPath, drop_path
from .helpers import make_divisible, to_1tuple, to_2tuple, to_3tuple, to_4tuple, to_ntuple
from .mlp import Mlp
from .patch_embed import PatchEmbed
from .weight_init import lecun_normal_, trunc_normal_, trunc_normal_tf_
