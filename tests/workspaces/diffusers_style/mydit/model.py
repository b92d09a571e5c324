# A small DiT-style diffusion transformer written for shardlens' tests, on diffusers' core: ModelMixin, ConfigMixin,
# @register_to_config, Attention, FeedForward, timestep embeddings and PatchEmbed.
import torch
from torch import nn

from diffusers.configuration_utils import ConfigMixin, register_to_config
from diffusers.models.attention import FeedForward
from diffusers.models.attention_processor import Attention
from diffusers.models.embeddings import PatchEmbed, TimestepEmbedding, Timesteps
from diffusers.models.modeling_outputs import Transformer2DModelOutput
from diffusers.models.modeling_utils import ModelMixin


class MyDiTBlock(nn.Module):
    def __init__(self, dim, heads, head_dim, cross_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.attn1 = Attention(query_dim=dim, heads=heads, dim_head=head_dim, bias=True, qk_norm="rms_norm")
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.attn2 = Attention(query_dim=dim, cross_attention_dim=cross_dim, heads=heads, dim_head=head_dim, bias=True)
        self.ff = FeedForward(dim, mult=2, activation_fn="gelu-approximate")
        self.ada = nn.Linear(dim, 6 * dim)

    def forward(self, x, context, temb):
        shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(temb)[:, None].chunk(6, dim=-1)
        x = x + gate1 * self.attn1(self.norm1(x) * (1 + scale1) + shift1)
        x = x + self.attn2(x, encoder_hidden_states=context)
        return x + gate2 * self.ff(self.norm2(x) * (1 + scale2) + shift2)


class MyDiT(ModelMixin, ConfigMixin):
    config_name = "config.json"

    @register_to_config
    def __init__(self, sample_size=16, patch_size=2, in_channels=4, num_layers=2, num_attention_heads=2,
                 attention_head_dim=16, cross_attention_dim=24, out_channels=None):
        super().__init__()
        dim = num_attention_heads * attention_head_dim
        self.out_channels = out_channels or in_channels
        self.pos_embed = PatchEmbed(height=sample_size, width=sample_size, patch_size=patch_size,
                                    in_channels=in_channels, embed_dim=dim)
        self.time_proj = Timesteps(num_channels=64, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embedding = TimestepEmbedding(in_channels=64, time_embed_dim=dim)
        self.blocks = nn.ModuleList(
            [MyDiTBlock(dim, num_attention_heads, attention_head_dim, cross_attention_dim) for _ in range(num_layers)]
        )
        self.norm_out = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.proj_out = nn.Linear(dim, patch_size * patch_size * self.out_channels)

    def forward(self, hidden_states, timestep, encoder_hidden_states):
        p = self.config.patch_size
        height = hidden_states.shape[-2] // p
        width = hidden_states.shape[-1] // p
        x = self.pos_embed(hidden_states)
        temb = self.time_embedding(self.time_proj(timestep))
        for block in self.blocks:
            x = block(x, encoder_hidden_states, temb)
        x = self.proj_out(self.norm_out(x))
        x = x.reshape(-1, height, width, p, p, self.out_channels).permute(0, 5, 1, 3, 2, 4)
        return Transformer2DModelOutput(sample=x.reshape(-1, self.out_channels, height * p, width * p))
