"""A column-parallel layer, a LayerNorm over its (sharded) output features, a row-parallel layer:
sharded this way the norm needs its statistics summed over the devices (`shardlens verify` tests)."""

import torch.nn as nn
import torch.nn.functional as F


class NormBetween(nn.Module):
    def __init__(self, dim: int = 64, hidden: int = 256):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.down(F.gelu(self.norm(self.up(x))))


model = NormBetween()
