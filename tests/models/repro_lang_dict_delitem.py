# Reduced from lang_config_dunders.py: dict-subclass config with `__delattr__ = dict.__delitem__` (dotdict idiom).
import torch.nn as nn


class dotdict(dict):
    __getattr__ = dict.get
    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__


cfg = dotdict(dim=32, depth=2)
model = nn.Sequential(*[nn.Linear(cfg.dim, cfg.dim) for _ in range(cfg.depth)])
