"""A block registered twice in a ModuleList (PyTorch names its parameters once, under the first
index), and a model reached through an attribute of a plain object (`--model holder.net`)."""
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim=4096):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(self.up(x).relu())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        shared = Block()
        self.layers = nn.ModuleList([Block(), Block(), shared, shared, Block()])
        self.head = nn.Linear(4096, 32000, bias=False)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class Holder:
    pass


holder = Holder()
holder.net = Net()
print("built")
