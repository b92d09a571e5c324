# Reduced from lang_registry_abc.py: instantiating an abc.ABC subclass with an unimplemented @abstractmethod must raise TypeError (caught by `except TypeError:`).
import abc

import torch.nn as nn


class Backbone(nn.Module, abc.ABC):
    @abc.abstractmethod
    def stages(self):
        ...


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            self.backbone = Backbone()  # TypeError: can't instantiate abstract class
        except TypeError:
            self.backbone = nn.Conv2d(3, 8, 3)


model = Net()
