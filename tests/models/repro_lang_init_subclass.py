# Reduced from lang_registry_abc.py: `__init_subclass__(cls, key=None, **kw)` registry filled by class keywords `class Small(Backbone, key="small")`.
import torch.nn as nn

REGISTRY = {}


class Backbone(nn.Module):
    def __init_subclass__(cls, key=None, **kwargs):
        super().__init_subclass__(**kwargs)
        REGISTRY[key or cls.__name__] = cls


class Small(Backbone, key="small"):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)


model = REGISTRY["small"]()
