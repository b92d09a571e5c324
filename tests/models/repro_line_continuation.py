# Reduced from metaformer_caformer.py: a backslash line continuation inside a
# conditional expression (and inside call arguments); tree-sitter puts a
# `line_continuation` node among the children and shardlens silently drops the
# assignment (res_scale1) / loses the shape (fc), with no unresolved entry.
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim=64, res_scale_init_value=1.0):
        super().__init__()
        self.res_scale1 = nn.Parameter(res_scale_init_value * torch.ones(dim)) \
            if res_scale_init_value else None
        self.fc = nn.Linear(dim, \
                            dim)


model = Block()
