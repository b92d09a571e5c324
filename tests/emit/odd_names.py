"""Registered names that are not Python attribute paths, for the emitters' tests: ModuleDict keys
with dashes and keywords, Sequential with OrderedDict keys, setattr / add_module names, a
ParameterList, identical blocks in a ModuleDict and after a different first child, and the model
built inside `if __name__ == "__main__":`."""
from collections import OrderedDict

import torch
import torch.nn as nn


class Expert(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


class Odd(nn.Module):
    def __init__(self, dim=4096):
        super().__init__()
        self.blocks = nn.ModuleDict({"attn-1": nn.Linear(dim, dim), "class": nn.Linear(dim, dim)})
        self.experts = nn.ModuleDict({"e0": Expert(dim), "e1": Expert(dim)})
        self.seq = nn.Sequential(OrderedDict([("first", nn.Linear(dim, dim)), ("2", nn.Linear(dim, dim))]))
        self.stack = nn.Sequential(nn.LayerNorm(dim), Expert(dim), Expert(dim), Expert(dim))
        setattr(self, "lambda", nn.Linear(dim, dim))
        self.add_module("my layer", nn.Linear(dim, dim))
        self.plist = nn.ParameterList([nn.Parameter(torch.zeros(dim, dim)) for _ in range(2)])

    def forward(self, x):
        x = self.blocks["class"](torch.relu(self.blocks["attn-1"](x)))
        for expert in self.experts.values():
            x = x + expert(x)
        x = self.seq(x)
        x = self.stack(x)
        x = getattr(self, "lambda")(x)
        x = getattr(self, "my layer")(x)
        return x @ self.plist[0] @ self.plist[1]


if __name__ == "__main__":
    print("building")
    model = Odd()
    y = model(torch.zeros(2, 4096))
