# A small DiT written for shardlens' tests in the style of the original DiT code: timm's PatchEmbed, Attention and
# Mlp, einops for the patch layout, adaLN-Zero modulation.
import math

import torch
from einops import rearrange, repeat
from einops.layers.torch import EinMix, Rearrange
from timm.models.vision_transformer import Attention, Mlp, PatchEmbed
from timm.layers import DropPath, to_2tuple, trunc_normal_
from torch import nn


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class TimestepEmbedder(nn.Module):
    def __init__(self, hidden_size, frequency_embedding_size=64):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(frequency_embedding_size, hidden_size), nn.SiLU(),
                                 nn.Linear(hidden_size, hidden_size))
        self.frequency_embedding_size = frequency_embedding_size

    def forward(self, t):
        half = self.frequency_embedding_size // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        return self.mlp(torch.cat([torch.cos(args), torch.sin(args)], dim=-1))


class DiTBlock(nn.Module):
    def __init__(self, hidden_size, num_heads, mlp_ratio=4.0, drop_path=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.attn = Attention(hidden_size, num_heads=num_heads, qkv_bias=True)
        self.norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.mlp = Mlp(in_features=hidden_size, hidden_features=int(hidden_size * mlp_ratio),
                       act_layer=lambda: nn.GELU(approximate="tanh"), drop=0)
        self.drop_path = DropPath(drop_path)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 6 * hidden_size, bias=True))

    def forward(self, x, c):
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=1)
        x = x + self.drop_path(gate_msa.unsqueeze(1) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa)))
        return x + self.drop_path(gate_mlp.unsqueeze(1) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp)))


class DiT(nn.Module):
    def __init__(self, input_size=16, patch_size=2, in_channels=4, hidden_size=64, depth=3, num_heads=4,
                 num_classes=10):
        super().__init__()
        self.patch_size = to_2tuple(patch_size)
        self.out_channels = in_channels
        self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size, bias=True)
        self.t_embedder = TimestepEmbedder(hidden_size)
        self.y_embedder = nn.Embedding(num_classes + 1, hidden_size)
        num_patches = self.x_embedder.num_patches
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, hidden_size), requires_grad=False)
        self.blocks = nn.ModuleList([DiTBlock(hidden_size, num_heads, drop_path=0.1 * i) for i in range(depth)])
        self.token_mixer = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=hidden_size, e=hidden_size)
        self.final = nn.Linear(hidden_size, patch_size * patch_size * in_channels)
        self.unpatchify = Rearrange("b (h w) (p1 p2 c) -> b c (h p1) (w p2)", h=input_size // patch_size,
                                    p1=patch_size, p2=patch_size)
        trunc_normal_(self.y_embedder.weight, std=0.02)

    def forward(self, x, t, y):
        x = self.x_embedder(x) + self.pos_embed
        c = self.t_embedder(t) + self.y_embedder(y)
        for block in self.blocks:
            x = block(x, c)
        x = self.token_mixer(x)
        return self.unpatchify(self.final(x))


def pooled_tokens(x):
    """Mean over the patch grid, written with einops (exercises rearrange/repeat/reduce on real tensors)."""
    from einops import reduce

    grid = rearrange(x, "b (h w) d -> b h w d", h=int(x.shape[1] ** 0.5))
    return repeat(reduce(grid, "b h w d -> b d", "mean"), "b d -> b n d", n=2)
