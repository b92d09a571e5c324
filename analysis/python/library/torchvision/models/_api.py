# shardlens' model of torchvision.models._api (not the library itself): weights enums and the model registry.
# Pretrained weights are described but never downloaded.
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Dict

BUILTIN_MODELS = {}


@dataclass
class Weights:
    url: str
    transforms: Callable
    meta: Dict[str, Any] = field(default_factory=dict)


class WeightsEnum(Enum):
    @classmethod
    def verify(cls, obj):
        """None, a member, or a member's name ("IMAGENET1K_V1" or "ViT_B_16_Weights.IMAGENET1K_V1") -> member."""
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(
                    f"Invalid Weight class provided; expected {cls.__name__} but received {obj.__class__.__name__}."
                )
        return obj

    def get_state_dict(self, *args, **kwargs):
        raise NotImplementedError(
            f"shardlens does not download or read weights ({self.value.url}): build the model with weights=None"
        )

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


def register_model(name=None):
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn

    return wrapper


def list_models(module=None, include=None, exclude=None):
    return sorted(BUILTIN_MODELS.keys())


def get_model_builder(name):
    name = name.lower()
    if name not in BUILTIN_MODELS:
        raise ValueError(f"Unknown model {name}")
    return BUILTIN_MODELS[name]


def get_model(name, **config):
    return get_model_builder(name)(**config)
