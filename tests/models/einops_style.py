# A ViT-Huge/14 written the way lucidrains' vit-pytorch writes it with
# einops: `Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=..., p2=...)`
# as the first layer of an nn.Sequential, PreNorm(dim, fn) wrappers,
# FeedForward as an nn.Sequential, `project_out = not (heads == 1 and
# dim_head == dim)` choosing between a Sequential and nn.Identity, and
# nn.ModuleList([]) + .append(nn.ModuleList([...])) per layer.
#
# einops is not available here, so `Rearrange` is a local nn.Module with the
# same constructor as einops.layers.torch.Rearrange (a pattern string and
# axis lengths) and no parameters.
from typing import Dict, List, Tuple

import torch
from torch import nn


# ----------------------------------------------------------------------------
# stand-in for einops.layers.torch.Rearrange


def _parse_side(side: str) -> List[List[str]]:
    groups, current, depth = [], None, 0
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            current, depth = [], depth + 1
        elif token == ")":
            groups.append(current)
            current, depth = None, depth - 1
        elif depth:
            current.append(token)
        else:
            groups.append([token])
    return groups


class Rearrange(nn.Module):
    """Reshape/transposition by a pattern, e.g. 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)'."""

    def __init__(self, pattern: str, **axes_lengths: int):
        super().__init__()
        self.pattern = pattern
        self.axes_lengths = axes_lengths
        left, right = pattern.split("->")
        self._left = _parse_side(left)
        self._right = _parse_side(right)

    def extra_repr(self) -> str:
        params = repr(self.pattern)
        for axis, length in self.axes_lengths.items():
            params += ", {}={}".format(axis, length)
        return params

    def forward(self, x):
        sizes: Dict[str, int] = dict(self.axes_lengths)
        for group, dim in zip(self._left, x.shape):
            unknown = [a for a in group if a not in sizes]
            known = 1
            for a in group:
                if a in sizes:
                    known *= sizes[a]
            if unknown:
                sizes[unknown[0]] = dim // known
        flat_axes = [a for group in self._left for a in group]
        x = x.reshape([sizes[a] for a in flat_axes])
        order = [flat_axes.index(a) for group in self._right for a in group]
        x = x.permute(order)
        out_shape = []
        for group in self._right:
            n = 1
            for a in group:
                n *= sizes[a]
            out_shape.append(n)
        return x.reshape(out_shape)


# ----------------------------------------------------------------------------
# vit_pytorch/vit.py


def pair(t):
    return t if isinstance(t, tuple) else (t, t)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, dropout = 0.):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, dim),
            nn.Dropout(dropout)
        )

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads = 8, dim_head = 64, dropout = 0.):
        super().__init__()
        inner_dim = dim_head *  heads
        project_out = not (heads == 1 and dim_head == dim)

        self.heads = heads
        self.scale = dim_head ** -0.5

        self.attend = nn.Softmax(dim = -1)
        self.dropout = nn.Dropout(dropout)

        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias = False)

        self.to_out = nn.Sequential(
            nn.Linear(inner_dim, dim),
            nn.Dropout(dropout)
        ) if project_out else nn.Identity()

    def forward(self, x):
        b, n, _ = x.shape
        h = self.heads
        qkv = self.to_qkv(x).chunk(3, dim = -1)
        q, k, v = (t.reshape(b, n, h, -1).transpose(1, 2) for t in qkv)

        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale

        attn = self.dropout(self.attend(dots))

        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, mlp_dim, dropout = 0.):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                PreNorm(dim, Attention(dim, heads = heads, dim_head = dim_head, dropout = dropout)),
                PreNorm(dim, FeedForward(dim, mlp_dim, dropout = dropout))
            ]))

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x


class ViT(nn.Module):
    def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, pool = 'cls', channels = 3, dim_head = 64, dropout = 0., emb_dropout = 0.):
        super().__init__()
        image_height, image_width = pair(image_size)
        patch_height, patch_width = pair(patch_size)

        assert image_height % patch_height == 0 and image_width % patch_width == 0, 'Image dimensions must be divisible by the patch size.'

        num_patches = (image_height // patch_height) * (image_width // patch_width)
        patch_dim = channels * patch_height * patch_width
        assert pool in {'cls', 'mean'}, 'pool type must be either cls (cls token) or mean (mean pooling)'

        self.to_patch_embedding = nn.Sequential(
            Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1 = patch_height, p2 = patch_width),
            nn.LayerNorm(patch_dim),
            nn.Linear(patch_dim, dim),
            nn.LayerNorm(dim),
        )

        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)

        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim, dropout)

        self.pool = pool
        self.to_latent = nn.Identity()

        self.mlp_head = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, num_classes)
        )

    def forward(self, img):
        x = self.to_patch_embedding(img)
        b, n, _ = x.shape

        cls_tokens = self.cls_token.expand(b, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x += self.pos_embedding[:, :(n + 1)]
        x = self.dropout(x)

        x = self.transformer(x)

        x = x.mean(dim = 1) if self.pool == 'mean' else x[:, 0]

        x = self.to_latent(x)
        return self.mlp_head(x)


v = ViT(
    image_size = 224,
    patch_size = 14,
    num_classes = 1000,
    dim = 1280,
    depth = 32,
    heads = 16,
    dim_head = 80,
    mlp_dim = 5120,
    dropout = 0.1,
    emb_dropout = 0.1
)
