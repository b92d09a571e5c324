# Reduced from lang_dict_comprehensions.py: `del md[key]` then `md[key] = ...` moves the entry to the end.
import torch.nn as nn


class Towers(nn.Module):
    def __init__(self):
        super().__init__()
        self.towers = nn.ModuleDict({t: nn.Linear(16, 1) for t in ("click", "watch_time", "like")})
        del self.towers["watch_time"]
        self.towers["watch_time"] = nn.Linear(16, 2)  # re-added: now last


model = Towers()
