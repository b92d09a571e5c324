# shardlens' model of transformers.models.auto.auto_factory (not the library itself): the AutoModel* base class.
import importlib

# model types whose module folder is not the model type with "-" turned into "_"
SPECIAL_MODEL_TYPE_TO_MODULE_NAME = {
    "openai-gpt": "openai",
    "gemma3_text": "gemma3",
    "qwen3_vl_text": "qwen3_vl",
    "clip_text_model": "clip",
    "clip_vision_model": "clip",
    "siglip_text_model": "siglip",
    "siglip_vision_model": "siglip",
}

# pass-through keywords of from_pretrained that are not config attributes
_MODEL_KWARGS = ("torch_dtype", "dtype", "attn_implementation", "device_map", "low_cpu_mem_usage",
                 "quantization_config", "use_safetensors", "variant", "state_dict", "tp_plan")
_HUB_KWARGS = ("cache_dir", "subfolder", "revision")


def model_type_to_module_name(model_type):
    if model_type in SPECIAL_MODEL_TYPE_TO_MODULE_NAME:
        return SPECIAL_MODEL_TYPE_TO_MODULE_NAME[model_type]
    return model_type.replace("-", "_")


def import_model_module(model_type, kind):
    """transformers.models.<module>.<kind>_<module>, kind being "configuration" or "modeling"."""
    module_name = model_type_to_module_name(model_type)
    return importlib.import_module(f"transformers.models.{module_name}.{kind}_{module_name}")


class _BaseAutoModelClass:
    # the class for a model type is <config class name without "Config"> + _suffix, unless _overrides names it
    _suffix = "Model"
    _overrides = {}

    def __init__(self, *args, **kwargs):
        raise EnvironmentError(
            f"{self.__class__.__name__} is designed to be instantiated using "
            f"`{self.__class__.__name__}.from_pretrained(...)` or `{self.__class__.__name__}.from_config(config)`"
        )

    @classmethod
    def _model_class(cls, config):
        model_type = config.model_type
        name = cls._overrides.get(model_type)
        if name is None:
            name = config.__class__.__name__[: -len("Config")] + cls._suffix
        module = import_model_module(model_type, "modeling")
        if not hasattr(module, name):
            raise ValueError(
                f"Unrecognized configuration class {config.__class__.__name__} for {cls.__name__}: "
                f"transformers.models.{model_type_to_module_name(model_type)} has no class {name}"
            )
        return getattr(module, name)

    @classmethod
    def from_config(cls, config, **kwargs):
        return cls._model_class(config)._from_config(config, **kwargs)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        from .configuration_auto import AutoConfig

        config = kwargs.pop("config", None)
        model_kwargs = {}
        for key in _MODEL_KWARGS:
            if key in kwargs:
                model_kwargs[key] = kwargs.pop(key)
        hub_kwargs = {}
        for key in _HUB_KWARGS:
            if key in kwargs:
                hub_kwargs[key] = kwargs.pop(key)
        if config is None:
            config, kwargs = AutoConfig.from_pretrained(
                pretrained_model_name_or_path, return_unused_kwargs=True, **hub_kwargs, **kwargs
            )
        model_class = cls._model_class(config)
        return model_class.from_pretrained(
            pretrained_model_name_or_path, *model_args, config=config, **hub_kwargs, **model_kwargs, **kwargs
        )

    @classmethod
    def register(cls, config_class, model_class, exist_ok=False):
        cls._overrides = dict(cls._overrides)
        cls._overrides[config_class.model_type] = model_class.__name__
