# shardlens' model of transformers.utils.generic (not the library itself): ModelOutput and the forward decorators.
import functools

from _shardlens_common.outputs import FieldsByPosition


class ExplicitEnum:
    """An Enum of strings in the real library."""


class TensorType(ExplicitEnum):
    PYTORCH = "pt"
    TENSORFLOW = "tf"
    NUMPY = "np"
    JAX = "jax"


class ModelOutput(FieldsByPosition):
    """Base of the @dataclass outputs: fields by name, by key, or by position (None fields skipped)."""

    def __post_init__(self):
        pass

    def get(self, key, default=None):
        value = self.__dict__.get(key)
        return default if value is None else value

    def __contains__(self, key):
        return self.__dict__.get(key) is not None

    def __setitem__(self, key, value):
        setattr(self, key, value)


class TransformersKwargs(dict):
    """A TypedDict in the real library: only used in annotations (`**kwargs: Unpack[TransformersKwargs]`)."""


def can_return_tuple(func):
    """forward(..., return_dict=False) returns a tuple instead of the ModelOutput."""

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        return_dict = kwargs.pop("return_dict", None)
        if return_dict is None:
            return_dict = getattr(self.config, "return_dict", True)
        output = func(self, *args, **kwargs)
        if not return_dict and not isinstance(output, tuple):
            output = output.to_tuple()
        return output

    return wrapper


def check_model_inputs(func=None, **options):
    """The base model's forward: use_cache defaults to the config's, outputs become a tuple on return_dict=False.
    Newer versions also take options (`@check_model_inputs(tie_last_hidden_states=False)`): they change only
    which hidden states are recorded, so they are accepted and ignored here."""
    if func is None:
        return lambda f: check_model_inputs(f)

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        use_cache = kwargs.get("use_cache")
        if use_cache is None:
            use_cache = getattr(self.config, "use_cache", None)
        if use_cache is not None:
            if getattr(self, "gradient_checkpointing", False) and self.training:
                use_cache = False
            kwargs["use_cache"] = use_cache
        return_dict = kwargs.pop("return_dict", None)
        if return_dict is None:
            return_dict = getattr(self.config, "return_dict", True)
        kwargs.pop("output_attentions", None)
        kwargs.pop("output_hidden_states", None)
        outputs = func(self, *args, **kwargs)
        if not return_dict and not isinstance(outputs, tuple):
            outputs = outputs.to_tuple()
        return outputs

    return wrapper


class OutputRecorder:
    def __init__(self, target_class, index=0, layer_name=None, class_name=None):
        self.target_class = target_class
        self.index = index
        self.layer_name = layer_name
        self.class_name = class_name


def is_torch_fx_proxy(x):
    return False


def is_tensor(x):
    import torch

    return isinstance(x, torch.Tensor)
