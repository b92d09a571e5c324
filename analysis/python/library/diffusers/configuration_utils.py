# shardlens' model of diffusers.configuration_utils (not the library itself): ConfigMixin and @register_to_config.
import functools
import json
import os

from huggingface_hub import hf_hub_download


class FrozenDict(dict):
    """The recorded config: a dict whose keys are also attributes (config.sample_size == config["sample_size"])."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            setattr(self, key, value)


def _init_parameters(init):
    """(names, defaults) of an __init__'s parameters after self; what inspect.signature gives the real library."""
    init = getattr(init, "__wrapped__", init)
    code = init.__code__
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[1:count])
    defaults = {}
    positional = list(code.co_varnames[1 : code.co_argcount])
    values = init.__defaults__ or ()
    for name, value in zip(positional[len(positional) - len(values) :], values):
        defaults[name] = value
    kwdefaults = init.__kwdefaults__ or {}
    for name, value in kwdefaults.items():
        defaults[name] = value
    return names, defaults


def register_to_config(init):
    """Decorates a ConfigMixin's __init__: every parameter, passed or defaulted, is recorded in self.config."""

    @functools.wraps(init)
    def inner_init(self, *args, **kwargs):
        init_kwargs = {k: v for k, v in kwargs.items() if not k.startswith("_")}
        config_init_kwargs = {k: v for k, v in kwargs.items() if k.startswith("_")}
        ignore = getattr(self, "ignore_for_config", [])
        names, defaults = _init_parameters(init)
        new_kwargs = {}
        for name, value in zip(names, args):
            if name not in ignore:
                new_kwargs[name] = value
        for name in names:
            if name in ignore or name in new_kwargs:
                continue
            if name in init_kwargs:
                new_kwargs[name] = init_kwargs[name]
            elif name in defaults:
                new_kwargs[name] = defaults[name]
        used_defaults = [name for name in new_kwargs if name not in init_kwargs]
        if used_defaults:
            new_kwargs["_use_default_values"] = used_defaults
        for key, value in config_init_kwargs.items():
            new_kwargs[key] = value
        self.register_to_config(**new_kwargs)
        init(self, *args, **init_kwargs)

    inner_init.__wrapped__ = init
    return inner_init


class ConfigMixin:
    config_name = None
    ignore_for_config = []
    has_compatibles = False
    _deprecated_kwargs = []

    def register_to_config(self, **kwargs):
        if self.config_name is None:
            raise NotImplementedError(f"Make sure that {self.__class__} has defined a class name `config_name`")
        kwargs.pop("kwargs", None)
        if "_internal_dict" in self.__dict__:
            internal_dict = dict(self.__dict__["_internal_dict"])
            internal_dict.update(kwargs)
        else:
            internal_dict = kwargs
        self._internal_dict = FrozenDict(internal_dict)

    @property
    def config(self):
        return self._internal_dict

    @classmethod
    def load_config(cls, pretrained_model_name_or_path, subfolder=None, return_unused_kwargs=False, cache_dir=None,
                    revision=None, **kwargs):
        """The dict of the model's config file, from a folder, a .json file or the local Hugging Face cache."""
        path = str(pretrained_model_name_or_path)
        if os.path.isfile(path):
            config_file = path
        elif os.path.isdir(path):
            folder = os.path.join(path, subfolder) if subfolder else path
            config_file = os.path.join(folder, cls.config_name)
            if not os.path.isfile(config_file):
                raise EnvironmentError(f"Error no file named {cls.config_name} found in directory {folder}.")
        else:
            config_file = hf_hub_download(path, cls.config_name, subfolder=subfolder, revision=revision,
                                          cache_dir=cache_dir)
        with open(config_file) as f:
            config_dict = json.load(f)
        if return_unused_kwargs:
            return config_dict, kwargs
        return config_dict

    @classmethod
    def extract_init_dict(cls, config_dict, **kwargs):
        names, defaults = _init_parameters(cls.__init__)
        init_dict = {}
        for name in names:
            if name in kwargs:
                init_dict[name] = kwargs.pop(name)
            elif name in config_dict:
                init_dict[name] = config_dict[name]
        unused = {k: v for k, v in config_dict.items() if k not in init_dict and not k.startswith("_")}
        return init_dict, unused, kwargs

    @classmethod
    def from_config(cls, config=None, return_unused_kwargs=False, **kwargs):
        if config is None:
            raise ValueError("Please make sure to provide a config as the first positional argument.")
        config = dict(config)
        init_dict, unused, remaining = cls.extract_init_dict(config, **kwargs)
        model = cls(**init_dict)
        model.register_to_config(**unused)
        if return_unused_kwargs:
            return model, remaining
        return model

    def save_config(self, save_directory, push_to_hub=False, **kwargs):
        raise NotImplementedError("shardlens' model of diffusers does not write files")

    def to_json_string(self):
        return json.dumps(dict(self._internal_dict), indent=2, sort_keys=True) + "\n"


class LegacyConfigMixin(ConfigMixin):
    """The config side of legacy classes (Transformer2DModel): the real one maps them on from_config."""
