# Reduced from lang_itertools_channels.py: `itertools.starmap(nn.Conv2d, arg_tuples)`.
import itertools

import torch.nn as nn

PAIRS = [(3, 16, 3), (16, 32, 3), (32, 64, 1)]
model = nn.Sequential(*itertools.starmap(nn.Conv2d, PAIRS))
