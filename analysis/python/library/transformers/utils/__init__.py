# shardlens' model of transformers.utils (not the library itself): the helpers model files import from here.
from . import logging
from .auto_docstring import auto_docstring
from .doc import (
    add_code_sample_docstrings,
    add_end_docstrings,
    add_start_docstrings,
    add_start_docstrings_to_model_forward,
    replace_return_docstrings,
)
from .generic import (
    ExplicitEnum,
    ModelOutput,
    OutputRecorder,
    TensorType,
    TransformersKwargs,
    can_return_tuple,
    check_model_inputs,
    is_tensor,
    is_torch_fx_proxy,
)
from .hub import CONFIG_NAME, SAFE_WEIGHTS_NAME, WEIGHTS_NAME, cached_file
from .import_utils import (
    is_torch_available,
    is_torch_greater_or_equal,
    is_torch_flex_attn_available,
    is_torch_sdpa_available,
    is_torchdynamo_compiling,
    is_torch_xla_available,
    is_torch_xpu_available,
    is_torch_npu_available,
    is_torch_mlu_available,
    is_torch_fx_available,
    is_flash_attn_2_available,
    is_flash_attn_greater_or_equal,
    is_flash_attn_greater_or_equal_2_10,
    is_accelerate_available,
    is_kernels_available,
    is_peft_available,
    is_tf_available,
    is_flax_available,
    is_scipy_available,
    is_vision_available,
    is_timm_available,
    is_tokenizers_available,
    is_sentencepiece_available,
    is_bitsandbytes_available,
    is_causal_conv1d_available,
    is_mamba_ssm_available,
    is_mamba_2_ssm_available,
    is_torch_cuda_available,
    is_speech_available,
    is_librosa_available,
    is_soundfile_available,
    is_torchaudio_available,
    is_protobuf_available,
    is_ninja_available,
    is_triton_available,
    is_flash_attn_3_available,
    is_apex_available,
    is_deepspeed_available,
    is_safetensors_available,
    is_torchvision_available,
    torch_float,
    torch_int,
)

DUMMY_INPUTS = [[7, 6, 0, 0, 1], [1, 2, 3, 0, 0], [0, 0, 0, 4, 5]]
DUMMY_MASK = [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [0, 0, 0, 1, 1]]


def check_torch_load_is_safe():
    """Nothing is loaded during analysis: there is no torch.load to check."""
