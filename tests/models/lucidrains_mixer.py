# MLP-Mixer-L/16 written the way lucidrains' mlp-mixer-pytorch writes it: the
# model is a *function* returning one big nn.Sequential, with
# `chan_first, chan_last = partial(nn.Conv1d, kernel_size = 1), nn.Linear`,
# a list comprehension star-unpacked into the Sequential, PreNormResidual
# wrappers and einops-style Rearrange / Reduce layers (local stand-ins with
# the einops.layers.torch constructor signatures and no parameters).
from functools import partial

import torch
from torch import nn


class Rearrange(nn.Module):
    """Stand-in for einops.layers.torch.Rearrange; supports the patch pattern used below."""

    def __init__(self, pattern, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.axes_lengths = axes_lengths

    def forward(self, x):
        p1, p2 = self.axes_lengths['p1'], self.axes_lengths['p2']
        b, c, H, W = x.shape
        h, w = H // p1, W // p2
        x = x.reshape(b, c, h, p1, w, p2).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, h * w, p1 * p2 * c)


class Reduce(nn.Module):
    """Stand-in for einops.layers.torch.Reduce('b n c -> b c', 'mean')."""

    def __init__(self, pattern, reduction, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.reduction = reduction
        self.axes_lengths = axes_lengths

    def forward(self, x):
        return getattr(x, self.reduction)(dim = 1)


pair = lambda x: x if isinstance(x, tuple) else (x, x)


class PreNormResidual(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.fn(self.norm(x)) + x


def FeedForward(dim, expansion_factor = 4, dropout = 0., dense = nn.Linear):
    inner_dim = int(dim * expansion_factor)
    return nn.Sequential(
        dense(dim, inner_dim),
        nn.GELU(),
        nn.Dropout(dropout),
        dense(inner_dim, dim),
        nn.Dropout(dropout)
    )


def MLPMixer(*, image_size, channels, patch_size, dim, depth, num_classes, expansion_factor = 4, expansion_factor_token = 0.5, dropout = 0.):
    image_h, image_w = pair(image_size)
    assert (image_h % patch_size) == 0 and (image_w % patch_size) == 0, 'image must be divisible by patch size'
    num_patches = (image_h // patch_size) * (image_w // patch_size)
    chan_first, chan_last = partial(nn.Conv1d, kernel_size = 1), nn.Linear

    return nn.Sequential(
        Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1 = patch_size, p2 = patch_size),
        nn.Linear((patch_size ** 2) * channels, dim),
        *[nn.Sequential(
            PreNormResidual(dim, FeedForward(num_patches, expansion_factor, dropout, chan_first)),
            PreNormResidual(dim, FeedForward(dim, expansion_factor_token, dropout, chan_last))
        ) for _ in range(depth)],
        nn.LayerNorm(dim),
        Reduce('b n c -> b c', 'mean'),
        nn.Linear(dim, num_classes)
    )


model = MLPMixer(
    image_size = 224,
    channels = 3,
    patch_size = 16,
    dim = 1024,
    depth = 24,
    num_classes = 1000
)
