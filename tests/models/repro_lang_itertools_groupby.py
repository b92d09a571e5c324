# Reduced from lang_itertools_channels.py: `itertools.groupby(rows, key=lambda t: t[1])`.
import itertools

import torch.nn as nn

TASKS = [("depth", 4, 1), ("normals", 4, 3), ("edges", 8, 1)]  # already sorted by stride


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict()
        for stride, group in itertools.groupby(TASKS, key=lambda t: t[1]):
            self.heads[f"s{stride}"] = nn.ModuleList(nn.Conv2d(32, out, 1) for _, _, out in group)


model = Heads()
