# Reduced from lang_setattr_loops.py: `delattr(self, name)` removes the submodule; re-assigning registers it at the end (`del self.x` works).
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.body = nn.Linear(8, 8)
        delattr(self, "fc")
        self.fc = nn.Linear(8, 2)  # re-added: registered after body


model = Net()
