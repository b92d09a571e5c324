# Reduced from lang_dict_comprehensions.py: `nn.ModuleDict.pop(key)` returning the removed module.
import torch.nn as nn


class Towers(nn.Module):
    def __init__(self):
        super().__init__()
        self.towers = nn.ModuleDict({t: nn.Linear(16, 1) for t in ("click", "watch_time", "like")})
        old = self.towers.pop("watch_time")
        self.towers["watch_time"] = nn.Linear(old.in_features, 2)


model = Towers()
