# Reduced from lang_container_surgery.py: `del mlist[i]` removes and renumbers an nn.ModuleList.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        del blocks[0]   # renumbered: "0", "1"
        self.blocks = blocks


model = Net()
