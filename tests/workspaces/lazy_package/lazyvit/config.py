# Constructor arguments recorded as a frozen, attribute-readable dict before __init__ runs.
import functools
import inspect
from collections import OrderedDict


class FrozenDict(OrderedDict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            setattr(self, key, value)
        self.__frozen = True


class ConfigMixin:
    def register_to_config(self, **kwargs):
        merged = dict(self._internal_dict) if hasattr(self, "_internal_dict") else {}
        merged.update(kwargs)
        self._internal_dict = FrozenDict(merged)

    @property
    def config(self):
        return self._internal_dict


def register_to_config(init):
    @functools.wraps(init)
    def wrapped(self, *args, **kwargs):
        params = list(inspect.signature(init).parameters.items())[1:]
        values = {name: p.default for name, p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD}
        for (name, _), value in zip(params, args):
            values[name] = value
        values.update(kwargs)
        self.register_to_config(**values)
        init(self, *args, **kwargs)

    return wrapped
