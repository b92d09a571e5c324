# shardlens' model of diffusers.models.modeling_utils (not the library itself): ModelMixin.
import torch
from _shardlens_common.modules import ModelQueries, as_loaded, set_gradient_checkpointing

from ..utils import logging

logger = logging.get_logger(__name__)


def _torch_dtype(dtype):
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    return dtype


class ModelMixin(torch.nn.Module, ModelQueries):
    config_name = "config.json"
    _automatically_saved_args = ["_diffusers_version", "_class_name", "_name_or_path"]
    _supports_gradient_checkpointing = False
    _keys_to_ignore_on_load_unexpected = None
    _no_split_modules = None
    _keep_in_fp32_modules = None
    _skip_layerwise_casting_patterns = None
    _supports_group_offloading = True
    _repeated_blocks = []

    def __init__(self):
        super().__init__()
        self._gradient_checkpointing_func = None

    def __getattr__(self, name):
        # config values also read as attributes (model.in_channels), as the real class allows with a warning
        is_in_config = "_internal_dict" in self.__dict__ and name in self.__dict__["_internal_dict"]
        if is_in_config and name not in self.__dict__:
            return self.__dict__["_internal_dict"][name]
        return super().__getattr__(name)

    def enable_gradient_checkpointing(self, gradient_checkpointing_func=None):
        if not self._supports_gradient_checkpointing:
            raise ValueError(f"{self.__class__.__name__} does not support gradient checkpointing.")
        set_gradient_checkpointing(self, True)

    def disable_gradient_checkpointing(self):
        set_gradient_checkpointing(self, False)

    def set_use_memory_efficient_attention_xformers(self, valid, attention_op=None):
        pass

    def enable_xformers_memory_efficient_attention(self, attention_op=None):
        pass

    def disable_xformers_memory_efficient_attention(self):
        pass

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, subfolder=None, torch_dtype=None, **kwargs):
        """Builds the model from its config.json (a folder or the local Hugging Face cache); weights are not read."""
        dtype = _torch_dtype(kwargs.pop("dtype", torch_dtype))
        hub_kwargs = {}
        for key in ("cache_dir", "revision"):
            if key in kwargs:
                hub_kwargs[key] = kwargs.pop(key)
        for key in ("device_map", "low_cpu_mem_usage", "variant", "use_safetensors", "token", "local_files_only",
                    "force_download", "proxies", "output_loading_info", "max_memory", "offload_folder",
                    "offload_state_dict", "quantization_config", "ignore_mismatched_sizes", "mirror"):
            kwargs.pop(key, None)
        config = cls.load_config(pretrained_model_name_or_path, subfolder=subfolder, **hub_kwargs)
        model = cls.from_config(config, **kwargs)
        return as_loaded(model, dtype)

    def save_pretrained(self, save_directory, **kwargs):
        raise NotImplementedError("shardlens' model of diffusers does not write files")


class LegacyModelMixin(ModelMixin):
    """The base of legacy classes (Transformer2DModel): the real one maps them to newer classes on loading."""
