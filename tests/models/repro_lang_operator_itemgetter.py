# Reduced from lang_itertools_channels.py: `operator.itemgetter(2)` / `operator.attrgetter(...)` used with map/max.
import operator

import torch
import torch.nn as nn

SPECS = [(1, 2, 64), (2, 2, 18), (3, 2, 36)]
width = max(map(operator.itemgetter(2), SPECS))
model = nn.Linear(width, operator.attrgetter("real")(8))
