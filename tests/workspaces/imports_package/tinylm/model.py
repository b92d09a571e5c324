import torch
import torch.nn as nn

from . import layers
from .layers.attention import SelfAttention
from .layers import mlp as mlp_module
from extra_ops import ScaledNorm  # found through sys.path.insert in the loader
from nspkg.blocks.residual import Residual  # a namespace package: nspkg has no __init__.py

try:
    from fused_kernels_that_do_not_exist import fused_mlp  # noqa: F401
    HAVE_FUSED = True
except ImportError:
    HAVE_FUSED = False


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm1 = ScaledNorm(config.dim)
        self.attn = Residual(SelfAttention(config.dim, config.n_head))
        self.norm2 = layers.make_norm(config.dim)
        hidden = config.dim * config.ffn_mult if not HAVE_FUSED else config.dim
        self.mlp = mlp_module.MLP(config.dim, hidden)

    def forward(self, x):
        x = self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.dim)
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.head = nn.Linear(config.dim, config.vocab_size, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x)
