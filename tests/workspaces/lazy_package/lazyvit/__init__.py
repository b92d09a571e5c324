# A package whose names load on first use: its module object in sys.modules is replaced by a
# ModuleType subclass that imports the submodule holding a name when the name is asked for.
import importlib
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING


class _DeferredModule(ModuleType):
    def __init__(self, name, init_file, structure, spec=None):
        super().__init__(name)
        self._submodules = set(structure)
        self._owner = {member: sub for sub, members in structure.items() for member in members}
        self.__file__ = init_file
        self.__spec__ = spec
        self.__path__ = [os.path.dirname(init_file)]
        self.__all__ = sorted(self._submodules) + sorted(self._owner)

    def __getattr__(self, name):
        if name in self._submodules:
            value = importlib.import_module("." + name, self.__name__)
        elif name in self._owner:
            value = getattr(importlib.import_module("." + self._owner[name], self.__name__), name)
        else:
            raise AttributeError(f"module {self.__name__} has no attribute {name}")
        setattr(self, name, value)
        return value


_structure = {"config": ["ConfigMixin", "register_to_config"], "model": ["TinyViT"], "utils": []}

if TYPE_CHECKING:
    from .model import TinyViT
else:
    sys.modules[__name__] = _DeferredModule(__name__, globals()["__file__"], _structure, spec=__spec__)
