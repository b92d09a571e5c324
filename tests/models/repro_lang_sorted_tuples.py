# Reduced from lang_itertools_channels.py: `sorted()` of tuples (lexicographic comparison).
import torch.nn as nn

STAGES = [(2, 128), (1, 64), (2, 96)]
model = nn.ModuleList(nn.Linear(w, w * s) for s, w in sorted(STAGES))
