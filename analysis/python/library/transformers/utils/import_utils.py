# shardlens' model of transformers.utils.import_utils (not the library itself): the optional packages a model may test for.
# PyTorch is there; the accelerator-specific and optional kernels are not, so model code takes its plain-PyTorch path.
from _shardlens_common.answers import answer

is_torch_available = answer(True)
is_torch_greater_or_equal = answer(True)
is_torch_flex_attn_available = answer(False)
is_torch_sdpa_available = answer(True)
is_torchdynamo_compiling = answer(False)
is_torch_xla_available = answer(False)
is_torch_xpu_available = answer(False)
is_torch_npu_available = answer(False)
is_torch_mlu_available = answer(False)
is_torch_fx_available = answer(True)
is_flash_attn_2_available = answer(False)
is_flash_attn_greater_or_equal = answer(False)
is_flash_attn_greater_or_equal_2_10 = answer(False)
is_accelerate_available = answer(False)
is_kernels_available = answer(False)
is_peft_available = answer(False)
is_tf_available = answer(False)
is_flax_available = answer(False)
is_scipy_available = answer(False)
is_vision_available = answer(False)
is_timm_available = answer(False)
is_tokenizers_available = answer(False)
is_sentencepiece_available = answer(False)
is_bitsandbytes_available = answer(False)
is_causal_conv1d_available = answer(False)
is_mamba_ssm_available = answer(False)
is_mamba_2_ssm_available = answer(False)
is_torch_cuda_available = answer(False)
is_speech_available = answer(False)
is_librosa_available = answer(False)
is_soundfile_available = answer(False)
is_torchaudio_available = answer(False)
is_protobuf_available = answer(False)
is_ninja_available = answer(False)
is_triton_available = answer(False)
is_flash_attn_3_available = answer(False)
is_apex_available = answer(False)
is_deepspeed_available = answer(False)
is_safetensors_available = answer(True)
is_torchvision_available = answer(False)


def torch_int(x):
    """int(x): the library keeps a tensor only while torch.jit or dynamo traces, and the analysis runs eagerly."""
    return int(x)


def torch_float(x):
    """float(x), as torch_int."""
    return float(x)
