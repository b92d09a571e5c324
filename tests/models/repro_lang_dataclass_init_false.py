# Reduced from lang_dataclass_configs.py: frozen dataclass with `field(init=False)` (no default) set via `object.__setattr__` in __post_init__.
from dataclasses import dataclass, field

import torch.nn as nn


@dataclass(frozen=True)
class ProjectorConfig:
    in_dim: int
    out_dim: int
    hidden: int = field(init=False)   # not an __init__ argument

    def __post_init__(self):
        object.__setattr__(self, "hidden", 2 * self.out_dim)


cfg = ProjectorConfig(in_dim=32, out_dim=16)
model = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.GELU(), nn.Linear(cfg.hidden, cfg.out_dim))
