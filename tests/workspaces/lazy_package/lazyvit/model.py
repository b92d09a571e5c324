import torch
from torch import nn

from . import ConfigMixin, register_to_config
from .utils import is_peft_available, is_torch_version

# A norm chosen by the installed torch's version, as libraries do for features of newer releases.
if is_torch_version(">=", "1.0") and not is_torch_version("<", "1.0"):
    Norm = nn.LayerNorm
else:
    Norm = None


class TinyViT(nn.Module, ConfigMixin):
    @register_to_config
    def __init__(self, image_size: int = 32, patch_size: int = 4, in_channels: int = 3, width: int = 64,
                 depth: int = 2, heads: int = 4, *, use_adapter: bool = False):
        super().__init__()
        self.patch = nn.Conv2d(in_channels, width, self.config.patch_size, self.config.patch_size)
        self.pos_embed = nn.Parameter(torch.zeros(1, (image_size // patch_size) ** 2, width))
        self.blocks = nn.ModuleList(
            [nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True) for _ in range(self.config.depth)])
        self.norm = Norm(width)
        self.adapter = nn.Linear(width, width) if use_adapter and is_peft_available() else None
        self.head = nn.Linear(width, self.config.patch_size ** 2 * in_channels)

    def forward(self, pixel_values):
        batch, channels, height, width = pixel_values.shape
        p = self.config.patch_size
        x = self.patch(pixel_values).flatten(2).transpose(1, 2) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        x = self.head(self.norm(x))
        x = x.reshape(batch, height // p, width // p, p, p, self.config.in_channels)
        return torch.einsum("nhwpqc->nchpwq", x).reshape(batch, channels, height, width)
