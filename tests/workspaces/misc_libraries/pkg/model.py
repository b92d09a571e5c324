# A small model written for shardlens' tests that leans on smaller libraries: simple_parsing's Serializable args
# (nested dataclass), packaging's version checks, loguru, einx, torch_einops_utils, SDPA attention,
# huggingface_hub's mixin.
from dataclasses import dataclass
from typing import Optional

import einx
import torch
from huggingface_hub import PyTorchModelHubMixin
from loguru import logger
from packaging import version
from simple_parsing.helpers import Serializable
from torch import nn
from torch_einops_utils import pad_at_dim, safe_cat
from torch_einops_utils.nn import Identity, Lambda, Sequential
import torch.nn.functional as F


@dataclass
class MoeArgs(Serializable):
    num_experts: int = 2
    num_experts_per_tok: int = 1


@dataclass
class ModelArgs(Serializable):
    dim: int = 32
    n_layers: int = 2
    n_heads: int = 4
    hidden_dim: int = 64
    vocab_size: int = 128
    moe: Optional[MoeArgs] = None


class Block(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads = args.n_heads
        self.wqkv = nn.Linear(args.dim, 3 * args.dim, bias=False)
        self.wo = nn.Linear(args.dim, args.dim, bias=False)
        experts = 1 if args.moe is None else args.moe.num_experts
        self.experts = nn.ModuleList(
            [Sequential(nn.Linear(args.dim, args.hidden_dim), None, Lambda(torch.relu), nn.Linear(args.hidden_dim, args.dim))
             for _ in range(experts)]
        )
        self.gate = nn.Linear(args.dim, experts, bias=False) if args.moe is not None else Identity()

    def forward(self, x, seqlens):
        q, k, v = self.wqkv(x).chunk(3, dim=-1)
        shape = (1, x.shape[0], self.n_heads, -1)
        out = F.scaled_dot_product_attention(q.reshape(shape).transpose(1, 2), k.reshape(shape).transpose(1, 2),
                                             v.reshape(shape).transpose(1, 2), is_causal=True).transpose(1, 2)
        x = x + self.wo(out.reshape(x.shape))
        return x + sum(expert(x) for expert in self.experts)


class Model(nn.Module, PyTorchModelHubMixin):
    def __init__(self, args):
        super().__init__()
        if version.parse(torch.__version__) < version.parse("1.10"):
            logger.warning("old torch")
        self.embed = nn.Embedding(args.vocab_size, args.dim)
        self.blocks = nn.ModuleList([Block(args) for _ in range(args.n_layers)])
        self.out = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens, seqlens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, seqlens)
        return self.out(x)


def relative_distances(n):
    positions = torch.arange(n)
    return pad_at_dim(einx.subtract("i, j -> i j", positions, positions), (1, 0), dim=-1)
