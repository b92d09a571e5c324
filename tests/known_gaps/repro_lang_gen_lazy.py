# Reduced from lang_generators.py: a generator expression evaluates names lazily: `width` rebound before consumption.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        width = 64
        layers = (nn.Linear(width, width) for _ in range(2))
        width = 128  # a generator expression reads `width` when it is consumed
        self.body = nn.Sequential(*layers)


model = Net()
