# shardlens' model of simple_parsing.helpers (not the library itself): Serializable, dict <-> dataclass.
import dataclasses
import typing


def _dataclass_in(annotation):
    """X for a field typed X or Optional[X] when X is a dataclass, else None."""
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if isinstance(arg, type) and dataclasses.is_dataclass(arg):
            return arg
    return None


def _from_dict(cls, data, drop_extra_fields):
    fields = dataclasses.fields(cls)
    hints = None
    kwargs = {}
    for f in fields:
        if f.name not in data:
            continue
        value = data[f.name]
        annotation = f.type
        if isinstance(annotation, str):
            if hints is None:
                hints = typing.get_type_hints(cls)
            annotation = hints[f.name]
        nested = _dataclass_in(annotation)
        if nested is not None and isinstance(value, dict):
            value = _from_dict(nested, value, drop_extra_fields)
        kwargs[f.name] = value
    extra = [key for key in data if key not in kwargs and all(f.name != key for f in fields)]
    if extra and drop_extra_fields is False:
        raise TypeError(f"{cls.__name__} got unexpected fields {extra}")
    return cls(**kwargs)


class Serializable:
    """Mixin for dataclasses: from_dict (nested dataclass fields decoded from dicts) and to_dict."""

    @classmethod
    def from_dict(cls, obj, drop_extra_fields=None):
        return _from_dict(cls, obj, drop_extra_fields)

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def load(cls, path, drop_extra_fields=None):
        import json

        with open(path) as f:
            return cls.from_dict(json.load(f), drop_extra_fields)
