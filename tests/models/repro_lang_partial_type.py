# Reduced from lang_recursive_unet.py: pix2pix `type(norm_layer) == functools.partial` then `norm_layer.func == nn.InstanceNorm2d`.
import functools

import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c=64, norm_layer=functools.partial(nn.InstanceNorm2d, affine=False)):
        super().__init__()
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        self.conv = nn.Conv2d(c, c, 4, 2, 1, bias=use_bias)
        self.norm = norm_layer(c)


model = Block()
