# Reduced from HF Zamba2: shared attention blocks handed out in turn with
# `blocks = cycle(blocks)` and `next(blocks)` per hybrid layer; shardlens: "condition could not be
# evaluated; neither branch was analysed: next() of unknown". Also zip() of a finite list with a cycle.
import itertools
from itertools import cycle

import torch.nn as nn


class SharedBlock(nn.Module):
    def __init__(self, block_id, dim=32):
        super().__init__()
        self.block_id = block_id
        self.proj = nn.Linear(dim, dim)


class Hybrid(nn.Module):
    def __init__(self, dim=32, kinds=("mamba", "hybrid", "mamba", "hybrid", "hybrid", "mamba", "hybrid"), shared=2):
        super().__init__()
        blocks = cycle([SharedBlock(k, dim) for k in range(shared)])
        layers = []
        for kind in kinds:
            if kind == "hybrid":
                block = next(blocks)
                layers.append(nn.ModuleDict({"shared": block, "adapter": nn.Linear(dim, 8 + block.block_id)}))
            else:
                layers.append(nn.Linear(dim, dim))
        self.layers = nn.ModuleList(layers)
        self.heads = nn.ModuleList([nn.Linear(dim, width) for width, _ in zip([1, 2, 3], itertools.cycle("ab"))])


model = Hybrid()
