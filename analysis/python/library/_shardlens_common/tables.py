# Library classes whose fields are data: written as tables, not one annotated line per field.
from dataclasses import dataclass
from typing import Any


def table_dataclass(name, bases, defaults, **members):
    """The @dataclass `class name(*bases)` with the fields of `defaults` (field -> default, in its order) and the
    given members (methods such as __post_init__)."""
    namespace = dict(defaults)
    namespace["__annotations__"] = dict.fromkeys(defaults, Any)
    namespace.update(members)
    return dataclass(type(name, bases, namespace))


def defaults_by_value(groups, **single):
    """{field: default} from (space-separated field names, default) pairs, then single fields."""
    defaults = {}
    for names, value in groups:
        defaults.update(dict.fromkeys(names.split(), value))
    defaults.update(single)
    return defaults
