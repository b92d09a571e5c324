# shardlens' model of the `diffusers` package (not the library itself): the top-level names, model classes found lazily.
from pkgutil import extend_path; __path__ = extend_path(__path__, __name__)
__path__ = __path__[1:] + __path__[:1]  # real source files first, this folder last (shardlens resolves the same way)

__version__ = "0.36.0"

from .configuration_utils import ConfigMixin, FrozenDict, register_to_config
from .models.modeling_utils import ModelMixin

# class name -> the diffusers module that defines it (the real package's lazy import table, for common models)
_MODEL_MODULES = {
    "AutoencoderKL": "diffusers.models.autoencoders.autoencoder_kl",
    "AutoencoderKLWan": "diffusers.models.autoencoders.autoencoder_kl_wan",
    "AutoencoderTiny": "diffusers.models.autoencoders.autoencoder_tiny",
    "UNet2DModel": "diffusers.models.unets.unet_2d",
    "UNet2DConditionModel": "diffusers.models.unets.unet_2d_condition",
    "Transformer2DModel": "diffusers.models.transformers.transformer_2d",
    "DiTTransformer2DModel": "diffusers.models.transformers.dit_transformer_2d",
    "PixArtTransformer2DModel": "diffusers.models.transformers.pixart_transformer_2d",
    "SD3Transformer2DModel": "diffusers.models.transformers.transformer_sd3",
    "FluxTransformer2DModel": "diffusers.models.transformers.transformer_flux",
    "WanTransformer3DModel": "diffusers.models.transformers.transformer_wan",
    "CogVideoXTransformer3DModel": "diffusers.models.transformers.cogvideox_transformer_3d",
    "HunyuanVideoTransformer3DModel": "diffusers.models.transformers.transformer_hunyuan_video",
    "LTXVideoTransformer3DModel": "diffusers.models.transformers.transformer_ltx",
    "MochiTransformer3DModel": "diffusers.models.transformers.transformer_mochi",
    "QwenImageTransformer2DModel": "diffusers.models.transformers.transformer_qwenimage",
}


def __getattr__(name):
    module_name = _MODEL_MODULES.get(name)
    if module_name is None:
        raise AttributeError(f"module 'diffusers' has no attribute '{name}'")
    import importlib

    return getattr(importlib.import_module(module_name), name)
