# shardlens' model of megatron.core.transformer.spec_utils (not the library itself): ModuleSpec and build_module.
import importlib
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass
class ModuleSpec:
    """module: a class, a function, or a (module path, name) tuple; params: extra constructor keywords;
    submodules: passed to the constructor as `submodules=`."""

    module: Union[tuple, type, Any]
    params: dict = field(default_factory=lambda: {})
    submodules: Any = None


def import_module(module_path):
    base_path, name = module_path
    return getattr(importlib.import_module(base_path), name)


def get_module(spec_or_module, **additional_kwargs):
    if isinstance(spec_or_module, type) or (callable(spec_or_module) and not isinstance(spec_or_module, ModuleSpec)):
        return spec_or_module
    if isinstance(spec_or_module.module, tuple):
        return import_module(spec_or_module.module)
    return spec_or_module.module


def _is_function(obj):
    return callable(obj) and not isinstance(obj, type) and not isinstance(obj, ModuleSpec)


def build_module(spec_or_module, *args, **kwargs):
    """A function (or a spec of one) is returned as is; a class (or a spec of one) is instantiated with
    *args, the spec's params, `submodules=` when the spec has them, and **kwargs."""
    if _is_function(spec_or_module):
        return spec_or_module
    if isinstance(spec_or_module, ModuleSpec) and _is_function(spec_or_module.module):
        return spec_or_module.module
    if isinstance(spec_or_module, type):
        module = spec_or_module
    elif isinstance(spec_or_module.module, type):
        module = spec_or_module.module
    else:
        module = import_module(spec_or_module.module)
    if _is_function(module):
        return module
    params = {}
    if isinstance(spec_or_module, ModuleSpec):
        params = dict(spec_or_module.params)
        if spec_or_module.submodules is not None:
            kwargs["submodules"] = spec_or_module.submodules
    return module(*args, **params, **kwargs)
