# shardlens' model of diffusers.loaders (not the library itself): weight-loading mixins, no model structure.
from .peft import PeftAdapterMixin
from .single_file_model import FromOriginalModelMixin


class FromSingleFileMixin:
    pass


class UNet2DConditionLoadersMixin:
    pass


class TextualInversionLoaderMixin:
    pass


class StableDiffusionLoraLoaderMixin:
    pass
