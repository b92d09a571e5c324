# Reduced from lang_container_surgery.py: `seq[-1] = module` replaces the last nn.Sequential entry.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
        head[-1] = nn.Linear(32, 20)
        self.head = head


model = Net()
