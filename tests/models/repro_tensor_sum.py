# Reduced from swin_transformer.py: a buffer computed with a Tensor reduction
# method (`relative_coords.sum(-1)`); shardlens: "tensor attribute 'sum' is not
# modelled" (same for .mean/.prod/.amax/.max/.norm, and torch.sum gives no shape).
import torch
import torch.nn as nn


class WindowAttention(nn.Module):
    def __init__(self, ws=7):
        super().__init__()
        coords = torch.stack(torch.meshgrid([torch.arange(ws), torch.arange(ws)]))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = (coords_flatten[:, :, None] - coords_flatten[:, None, :]).permute(1, 2, 0)
        self.register_buffer("relative_position_index", relative_coords.sum(-1))


model = WindowAttention()
