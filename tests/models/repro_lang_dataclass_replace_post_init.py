# Reduced from lang_dataclass_configs.py: `dataclasses.replace(cfg, x=None)` re-runs __init__ and __post_init__.
import dataclasses
from typing import Optional

import torch.nn as nn


@dataclasses.dataclass
class Config:
    dim: int = 64
    n_heads: int = 8
    n_kv_heads: Optional[int] = 2

    def __post_init__(self):
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads


draft = dataclasses.replace(Config(), n_kv_heads=None)  # replace() re-runs __post_init__
model = nn.Linear(draft.dim, draft.n_kv_heads * (draft.dim // draft.n_heads))
