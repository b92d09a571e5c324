# Reduced from lang_registry_abc.py: `__init_subclass__` registry hook run when a subclass is defined.
import torch.nn as nn

REGISTRY = {}


class Backbone(nn.Module):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        REGISTRY[cls.__name__.lower()] = cls


class Small(Backbone):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)


model = REGISTRY["small"]()
