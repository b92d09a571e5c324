# Reduced from lang_itertools_channels.py: `itertools.product(range(n), repeat=2)`.
import itertools

import torch.nn as nn


class Fuse(nn.Module):
    def __init__(self, channels=(16, 32)):
        super().__init__()
        self.fuse = nn.ModuleList(
            nn.Conv2d(channels[j], channels[i], 1) for i, j in itertools.product(range(len(channels)), repeat=2))


model = Fuse()
