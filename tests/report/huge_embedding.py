# A retrieval-style model whose embedding table (4M x 4096, 32 GiB in bf16) does not fit one
# Wormhole's 12 GB: a replicated lookup needs no collective (the fastest layout) but does not fit,
# so the planner must fall back to a memory-saving layout and say what it costs. The report test
# uses it for the "Memory fallback" section.
import torch
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, vocab=4194304, dim=4096, hidden=1024):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, 256)

    def forward(self, ids):
        h = self.table(ids)
        return self.out(torch.relu(self.proj(h)))


model = Tower()
