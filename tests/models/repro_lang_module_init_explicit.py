# Reduced from lang_mixins.py: `nn.Module.__init__(self)` called explicitly instead of super().__init__().
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self, dim=64):
        nn.Module.__init__(self)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)


model = Mlp()
