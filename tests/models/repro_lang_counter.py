# Reduced from lang_dict_comprehensions.py: `collections.Counter(iterable)` counts, `.items()` and `counter[key]`.
import collections

import torch.nn as nn

DIMS = {"user": 64, "item": 64, "hour": 8}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        counts = collections.Counter(DIMS.values())
        self.proj = nn.Linear(sum(d * n for d, n in counts.items()), counts[64])


model = Net()
