# Reduced from lang_dataclass_configs.py: `@property` with a `@x.setter` on a config class.
import torch.nn as nn


class Config:
    def __init__(self, dim):
        self.dim = dim
        self._ffn = None

    @property
    def ffn_dim(self):
        return self._ffn if self._ffn is not None else 4 * self.dim

    @ffn_dim.setter
    def ffn_dim(self, value):
        self._ffn = value


cfg = Config(64)
cfg.ffn_dim = 100
model = nn.Sequential(nn.Linear(cfg.dim, cfg.ffn_dim), nn.Linear(cfg.ffn_dim, cfg.dim))
