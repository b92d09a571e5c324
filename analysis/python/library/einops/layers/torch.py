# shardlens' model of einops.layers.torch (not the library itself): einops operations as nn.Modules.
import math

import torch
from torch import nn

from ..einops import _parse_side, rearrange, reduce


class Rearrange(nn.Module):
    """No parameters: forward is einops.rearrange(x, pattern, **axes_lengths)."""

    def __init__(self, pattern, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.axes_lengths = axes_lengths

    def forward(self, input):
        return rearrange(input, self.pattern, **self.axes_lengths)

    def extra_repr(self):
        params = repr(self.pattern)
        for axis, length in self.axes_lengths.items():
            params += f", {axis}={length}"
        return params


class Reduce(nn.Module):
    def __init__(self, pattern, reduction, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.reduction = reduction
        self.axes_lengths = axes_lengths

    def forward(self, input):
        return reduce(input, self.pattern, self.reduction, **self.axes_lengths)

    def extra_repr(self):
        params = f"{self.pattern!r}, {self.reduction!r}"
        for axis, length in self.axes_lengths.items():
            params += f", {axis}={length}"
        return params


class EinMix(nn.Module):
    """A linear map written as an einsum: weight over the axes of `weight_shape`, optional bias over `bias_shape`.
    (This model takes elementary axes only, no parenthesised groups.)"""

    def __init__(self, pattern, weight_shape, bias_shape=None, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.weight_shape = weight_shape
        self.bias_shape = bias_shape
        self.axes_lengths = axes_lengths
        left, right = pattern.split("->")
        left_names = [g[0] for g in _parse_side(left.strip())]
        right_names = [g[0] for g in _parse_side(right.strip())]
        weight_names = weight_shape.split()
        fan_in = 1
        for name in weight_names:
            if name not in right_names:
                fan_in = fan_in * axes_lengths[name]
        bound = 1 / math.sqrt(fan_in)
        self.weight = nn.Parameter(torch.zeros([axes_lengths[name] for name in weight_names]).uniform_(-bound, bound))
        if bias_shape is not None:
            bias_names = bias_shape.split()
            shape = [axes_lengths[name] if name in bias_names else 1 for name in right_names]
            self.bias = nn.Parameter(torch.zeros(shape).uniform_(-bound, bound))
        else:
            self.bias = None
        letters = {}
        for name in left_names + weight_names + right_names:
            if name not in letters:
                letters[name] = "abcdefghijklmnopqrstuvwxyz"[len(letters)]
        self.einsum_pattern = (
            "".join(letters[n] for n in left_names) + ","
            + "".join(letters[n] for n in weight_names) + "->"
            + "".join(letters[n] for n in right_names)
        )

    def forward(self, input):
        result = torch.einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result = result + self.bias
        return result
