# A small TGI-style block written for shardlens' tests: layers are built from checkpoint tensors through a
# `weights` object (here one that makes empty tensors of the shapes a checkpoint would have).
import torch
from text_generation_server.layers import TensorParallelColumnLinear, TensorParallelEmbedding, TensorParallelRowLinear
from torch import nn


class ShapeWeights:
    def __init__(self, shapes):
        self.shapes = shapes
        self.process_group = None

    def get_tensor(self, name):
        return torch.empty(self.shapes[name])


class TGIBlock(nn.Module):
    def __init__(self, prefix, config, weights):
        super().__init__()
        self.embed = TensorParallelEmbedding(prefix=f"{prefix}.embed", weights=weights)
        self.qkv = TensorParallelColumnLinear.load_multi(config, prefixes=[f"{prefix}.q", f"{prefix}.k", f"{prefix}.v"],
                                                         weights=weights, bias=True, dim=0)
        self.o = TensorParallelRowLinear.load(config, prefix=f"{prefix}.o", weights=weights, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.o(((q @ k.transpose(-1, -2)).softmax(-1)) @ v)
