# Reduced from lang_dataclass_configs.py: `typing.NamedTuple` subclass with defaults: `cfg._replace(layers=3)`.
from typing import NamedTuple

import torch.nn as nn


class VisionConfig(NamedTuple):
    width: int = 256
    layers: int = 4


cfg = VisionConfig()._replace(layers=3)
model = nn.ModuleList(nn.Linear(cfg.width, cfg.width) for _ in range(cfg.layers))
