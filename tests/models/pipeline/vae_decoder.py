# The decoder half of a latent-diffusion VAE: a conv stem, GroupNorm + SiLU residual blocks and
# nearest-neighbour upsampling from the latent (4 x 64 x 64) to an image (3 x 512 x 512).
import torch
from torch import nn
import torch.nn.functional as F


class ResnetBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, cin, eps=1e-6)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2 = nn.GroupNorm(32, cout, eps=1e-6)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class Upsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class VAEDecoder(nn.Module):
    def __init__(self, latent_channels=4, channels=(512, 512, 256, 128), out_channels=3):
        super().__init__()
        self.conv_in = nn.Conv2d(latent_channels, channels[0], 3, padding=1)
        self.mid = nn.Sequential(ResnetBlock(channels[0], channels[0]), ResnetBlock(channels[0], channels[0]))
        stages = []
        cin = channels[0]
        for i, cout in enumerate(channels):
            stages.append(ResnetBlock(cin, cout))
            stages.append(ResnetBlock(cout, cout))
            if i < len(channels) - 1:
                stages.append(Upsample(cout))
            cin = cout
        self.up = nn.Sequential(*stages)
        self.norm_out = nn.GroupNorm(32, channels[-1], eps=1e-6)
        self.conv_out = nn.Conv2d(channels[-1], out_channels, 3, padding=1)

    def forward(self, z):
        h = self.up(self.mid(self.conv_in(z)))
        return self.conv_out(F.silu(self.norm_out(h)))


model = VAEDecoder()
