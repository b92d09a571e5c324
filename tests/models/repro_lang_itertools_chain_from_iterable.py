# Reduced from lang_itertools_channels.py: `itertools.chain.from_iterable(list_of_lists)`.
import itertools

import torch.nn as nn

STAGES = [[16, 16], [32, 32, 32], [64]]
widths = list(itertools.chain.from_iterable(STAGES))
model = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
