# Reduced from lang_generators.py: `next(gen)` at exhaustion raises StopIteration, caught with `except StopIteration as stop: stop.value`.
import torch.nn as nn


def stage(cin, cout):
    yield nn.Conv2d(cin, cout, 1)
    yield nn.BatchNorm2d(cout)
    return cout


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers, gen = [], stage(3, 16)
        while True:
            try:
                layers.append(next(gen))
            except StopIteration as stop:
                width = stop.value  # the generator's return value
                break
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, 10)


model = Net()
