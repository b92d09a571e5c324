# Reduced from lang_closures_partial.py: `partial.func` / `.args` / `.keywords`, partial of a partial flattened.
from functools import partial

import torch.nn as nn

norm = partial(nn.GroupNorm, 8)
norm = partial(norm, eps=1e-6)  # partial of partial flattens: func=GroupNorm, args=(8,)


class Block(nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, bias=norm.func is not nn.GroupNorm)
        self.norm = norm(c, affine=norm.keywords["eps"] < 1e-5)
        self.proj = nn.Linear(c, c // norm.args[0])


model = Block()
