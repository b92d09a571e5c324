# shardlens' model of diffusers.utils (not the library itself): the helpers model files import from here.
from . import logging
from .deprecation_utils import deprecate
from .import_utils import (
    is_accelerate_available,
    is_flash_attn_3_available,
    is_flash_attn_available,
    is_kernels_available,
    is_peft_available,
    is_sageattention_available,
    is_torch_available,
    is_torch_mlu_available,
    is_torch_npu_available,
    is_torch_version,
    is_torch_xla_available,
    is_torch_xla_version,
    is_transformers_available,
    is_xformers_available,
)
from .logging import get_logger
from .outputs import BaseOutput
from .peft_utils import apply_lora_scale, scale_lora_layers, unscale_lora_layers
from .torch_utils import apply_freeu, maybe_allow_in_graph, randn_tensor

USE_PEFT_BACKEND = False
CONFIG_NAME = "config.json"
WEIGHTS_NAME = "diffusion_pytorch_model.bin"
SAFETENSORS_WEIGHTS_NAME = "diffusion_pytorch_model.safetensors"
