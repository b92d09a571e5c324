# Reduced from lang_generators.py: `c = yield from sub()` takes the sub-generator's `return` value.
import torch.nn as nn


def stage(cin, cout):
    yield nn.Conv2d(cin, cout, 1)
    return cout


def body():
    c = yield from stage(3, 16)
    c = yield from stage(c, 32)
    yield nn.Conv2d(c, 10, 1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(*body())


model = Net()
