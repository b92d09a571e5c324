# Reduced from lang_decorators.py: `functools.singledispatch` with `.register` by annotation and by type argument.
import functools

import torch.nn as nn


@functools.singledispatch
def hidden_dim(cfg, dim):
    raise TypeError(type(cfg))


@hidden_dim.register
def _(cfg: int, dim):
    return cfg


@hidden_dim.register(float)
def _(cfg, dim):
    return int(dim * cfg)


model = nn.Sequential(nn.Linear(64, hidden_dim(4.0, 64)), nn.Linear(hidden_dim(4.0, 64), hidden_dim(32, 64)))
