# Reduced from lang_itertools_channels.py: `itertools.zip_longest(a, b, fillvalue=None)`.
import itertools

import torch.nn as nn


class Transition(nn.Module):
    def __init__(self, prev=(18, 36), new=(18, 36, 72)):
        super().__init__()
        layers = []
        for old, c in itertools.zip_longest(prev, new, fillvalue=None):
            layers.append(nn.Conv2d(prev[-1] if old is None else old, c, 3, padding=1))
        self.layers = nn.ModuleList(layers)


model = Transition()
