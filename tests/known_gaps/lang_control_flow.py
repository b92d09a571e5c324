# A config-driven ConvNeXt/ViT hybrid (CoAtNet-0-like) whose layer list is
# decided by control flow rather than data: structural pattern matching
# (`match`/`case` with literal, OR, capture, guard, sequence, mapping and
# class patterns), `for ... else` and `while ... else` (else runs only
# without break), `break`/`continue` inside nested loops, `try/except/else/
# finally` where the else branch adds layers, early `return` from nested
# helpers, and a `while True` loop halving a resolution.
import math
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Attn:
    dim: int
    heads: int = 8


def block_from_spec(spec, cin):
    match spec:
        case "mbconv" | "mb":
            return MBConv(cin, cin), cin
        case ("mbconv", int(cout)) if cout != cin:
            return MBConv(cin, cout, stride=2), cout
        case ("mbconv", cout):
            return MBConv(cin, cout), cout
        case {"type": "attn", "dim": dim, **rest}:
            return TransformerBlock(dim, rest.get("heads", 8)), dim
        case Attn(dim=d, heads=h):
            return TransformerBlock(d, h), d
        case [first, *others]:
            mods = []
            for s in [first, *others]:
                m, cin = block_from_spec(s, cin)
                mods.append(m)
            return nn.Sequential(*mods), cin
        case None:
            return nn.Identity(), cin
        case _:
            raise ValueError(spec)


class MBConv(nn.Module):
    def __init__(self, cin, cout, stride=1, expand=4):
        super().__init__()
        mid = cin * expand
        self.pre_norm = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, mid, 1)
        self.dw = nn.Conv2d(mid, mid, 3, stride, 1, groups=mid)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, cin // 4, 1), nn.GELU(),
                                nn.Conv2d(cin // 4, mid, 1), nn.Sigmoid())
        self.conv2 = nn.Conv2d(mid, cout, 1)
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.MaxPool2d(3, stride, 1), nn.Conv2d(cin, cout, 1))


class TransformerBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.rel_bias = nn.Parameter(torch.zeros(heads, 13 * 13))
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))


class CoAtNet(nn.Module):
    def __init__(self, num_classes=1000, img_size=224):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.GELU(),
                                  nn.Conv2d(64, 64, 3, 1, 1))
        specs = [
            ("mbconv", 96), "mbconv",
            ("mbconv", 192), "mb", "mbconv",
            [{"type": "attn", "dim": 192, "heads": 6}, Attn(192, 6)],
            None,
            ("mbconv", 384), {"type": "attn", "dim": 384, "heads": 12},
            Attn(384, heads=12),
        ]
        blocks, c = [], 64
        for spec in specs:
            if spec is None:
                continue
            m, c = block_from_spec(spec, c)
            blocks.append(m)
        self.blocks = nn.ModuleList(blocks)

        # for/else: else only runs when no break happened
        for i, m in enumerate(blocks):
            if isinstance(m, nn.Sequential) and len(m) > 5:
                self.found_big = nn.Identity()
                break
        else:
            self.no_big_seq = nn.Linear(c, c)

        for i, m in enumerate(blocks):
            if isinstance(m, TransformerBlock):
                self.first_attn_idx = i
                break
        else:
            self.first_attn_idx = -1
        self.attn_gate = nn.Parameter(torch.zeros(self.first_attn_idx + 1))

        res = img_size // 2
        n_down = 0
        while True:
            res //= 2
            n_down += 1
            if res <= 14:
                break
        self.downsamplers = nn.ModuleList(nn.AvgPool2d(2) for _ in range(n_down))

        k = 0
        while k < 3:
            k += 1
            if k == 10:
                break
        else:
            self.while_else = nn.Linear(k, k)

        try:
            heads = int("12")
        except ValueError:
            heads = 1
        else:
            self.head_norm = nn.LayerNorm(c)
        finally:
            self.pool_proj = nn.Linear(c, c // heads * heads)

        grid = []
        for i in range(4):
            row = []
            for j in range(4):
                if j > i:
                    break
                if (i + j) % 2:
                    continue
                row.append(nn.Conv2d(c, c, 1))
            grid.append(nn.ModuleList(row))
        self.grid = nn.ModuleList(grid)
        self.head = nn.Linear(c, num_classes)


model = CoAtNet()
