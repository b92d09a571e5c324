# Reduced from lang_dict_comprehensions.py: `collections.defaultdict(list)` creating missing keys on `d[key].append(...)`.
import collections

import torch.nn as nn

SPECS = {"user_city": "geo", "item_city": "geo", "item_id": "item_id"}


class Tables(nn.Module):
    def __init__(self):
        super().__init__()
        owners = collections.defaultdict(list)
        for name, key in SPECS.items():
            owners[key].append(name)
        self.tables = nn.ModuleDict({k: nn.Embedding(100, 4 * len(v)) for k, v in owners.items()})


model = Tables()
