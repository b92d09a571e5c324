# Reduced from lang_closures_partial.py / lang_decorators.py: attributes set on function objects (`conv.calls = 0`, `conv.calls += 1`).
import torch.nn as nn


def conv_factory():
    def conv(cin, cout):
        conv.calls += 1
        return nn.Conv2d(cin, cout, 3)
    conv.calls = 0
    return conv


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        conv = conv_factory()
        self.c1 = conv(3, 8)
        self.c2 = conv(8, 8)
        self.gate = nn.Linear(conv.calls, 1)


model = Net()
