import torch.nn as nn

from .mlp import MLP  # noqa: F401  (re-exported)


def make_norm(dim):
    return nn.LayerNorm(dim)
