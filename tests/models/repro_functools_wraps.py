# Reduced from detectron2_rpn.py (@configurable): a decorator whose inner
# function is decorated with @functools.wraps(init_func); shardlens evaluates
# `functools.wraps(f)(wrapped)` as a call of f ("__init__() missing required
# argument 'in_channels'") and finds no model.
import functools

import torch.nn as nn


def configurable(init_func):
    @functools.wraps(init_func)
    def wrapped(self, *args, **kwargs):
        init_func(self, *args, **kwargs)
    return wrapped


class StandardRPNHead(nn.Module):
    @configurable
    def __init__(self, in_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)


model = StandardRPNHead(256)
