# Reduced from lang_container_surgery.py: nn.ModuleList slicing with a step (`blocks[::2]`, `[1::2]`) returns a renumbered ModuleList.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))
        self.even = self.blocks[::2]   # listed (its children were already seen)
        self.odd = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)])[1::2]


model = Net()
