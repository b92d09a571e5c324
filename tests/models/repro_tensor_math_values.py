# Reduced from torchvision_regnet.py (BlockParams.from_init_params): per-block
# widths from torch.log / torch.round / torch.divide / torch.pow on known tensor
# values, then `.int().tolist()`; shardlens: "torch.round() of unknown values"
# and the stage loop is skipped (torch.diff is not modelled either).
import math

import torch
import torch.nn as nn


class RegNetTrunk(nn.Module):
    def __init__(self, depth=4, w_0=24, w_a=36.44, w_m=2.49):
        super().__init__()
        widths_cont = torch.arange(depth) * w_a + w_0
        block_capacity = torch.round(torch.log(widths_cont / w_0) / math.log(w_m))
        block_widths = (torch.round(torch.divide(w_0 * torch.pow(w_m, block_capacity), 8)) * 8).int().tolist()
        self.blocks = nn.ModuleList([nn.Conv2d(w, w, 1) for w in block_widths])


model = RegNetTrunk()
