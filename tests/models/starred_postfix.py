"""A star applies to the whole postfix expression after it (`*x.shape[-2:]`, `*dims[1:]`), which
tree-sitter-python parses as a subscript of a splat; x-transformers unpacks attention scores so."""
import torch
import torch.nn as nn

dims = (3, 16, 24, 5)
x = torch.zeros(2, 7, 32)
rows, cols, dtype = *x.shape[-2:], x.dtype
a, b, c = *dims[1:],


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(rows, cols)
        self.mid = nn.Linear(*dims[1:3])
        self.out = nn.Linear(b, c)

    def forward(self, h):
        return self.out(self.mid(h))


model = Net()
