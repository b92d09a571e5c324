# Reduced from lang_container_surgery.py: `del seq[i]` on nn.Sequential (torch 1.13 renumbers the remaining keys).
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 10))
        del head[2]   # torch 1.13 renumbers the rest: "0", "1", "2"
        self.head = head


model = Net()
