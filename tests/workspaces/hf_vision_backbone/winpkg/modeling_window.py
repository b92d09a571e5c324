# Window attention with a relative position bias indexed through meshgrid (as Swin builds it), and a
# backbone whose per-stage norms follow the aligned out_features and their channels.
import torch
from torch import nn
from transformers.pytorch_utils import meshgrid
from transformers.utils.backbone_utils import BackboneMixin

from .configuration_window import WindowConfig


class WindowAttention(nn.Module):
    def __init__(self, dim, heads, window):
        super().__init__()
        self.heads = heads
        self.bias_table = nn.Parameter(torch.zeros((2 * window - 1) * (2 * window - 1), heads))
        coords = torch.stack(meshgrid([torch.arange(window), torch.arange(window)], indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window - 1
        rel[:, :, 1] += window - 1
        rel[:, :, 0] *= 2 * window - 1
        self.register_buffer("index", rel.sum(-1), persistent=False)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        bias = self.bias_table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1)
        att = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5 + bias
        return self.proj((att.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))


class Stage(nn.Module):
    def __init__(self, dim, depth, heads, window):
        super().__init__()
        self.blocks = nn.ModuleList([WindowAttention(dim, heads, window) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(self.norm(x))
        return x


class WindowBackbone(nn.Module, BackboneMixin):
    def __init__(self, config: WindowConfig):
        super().__init__()
        self._init_backbone(config)
        self.patch = nn.Conv2d(3, config.embed_dim, config.patch_size, config.patch_size)
        self.stages = nn.ModuleList(
            [Stage(config.embed_dim, d, h, config.window_size) for d, h in zip(config.depths, config.num_heads)]
        )
        self.num_features = [config.embed_dim] * (len(config.depths) + 1)
        self.out_norms = nn.ModuleDict({stage: nn.LayerNorm(c) for stage, c in zip(self.out_features, self.channels)})

    def forward(self, pixel_values):
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        outputs = []
        for name, stage in zip(self.stage_names[1:], self.stages):
            x = stage(x)
            if name in self.out_features:
                outputs.append(self.out_norms[name](x))
        return outputs
