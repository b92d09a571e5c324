# Reduced from lang_recursive_unet.py: `isinstance(p, functools.partial)` is True for a partial object.
import functools

import torch.nn as nn

norm_layer = functools.partial(nn.InstanceNorm2d, affine=False)
use_bias = isinstance(norm_layer, functools.partial)  # True
model = nn.Conv2d(64, 64, 4, 2, 1, bias=use_bias)
