# Reduced from lang_scoping.py / lang_closures_partial.py: `nonlocal` counter updated by an inner function.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        calls = 0

        def bump():
            nonlocal calls
            calls += 1

        bump()
        bump()
        self.fc = nn.Linear(calls, 4)


model = Net()
