"""check-ir's test model: a feed-forward pair, column -> row on a mesh (one all-reduce)."""
import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    def __init__(self, dim=4096, hidden=16384):
        super().__init__()
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


model = FeedForward()
