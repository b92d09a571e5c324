# Reduced from lang_generators.py: `itertools.islice(it, 2)` consuming from a shared iterator.
import itertools

import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = iter([nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3), nn.ReLU()])
        self.stem = nn.Sequential(*itertools.islice(layers, 2))  # consumes two items
        self.rest = nn.Sequential(*layers)


model = Net()
