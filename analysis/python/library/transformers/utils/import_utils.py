# shardlens' model of transformers.utils.import_utils (not the library itself): the optional packages a model may test for.
# PyTorch is there; the accelerator-specific and optional kernels are not, so model code takes its plain-PyTorch path.


def is_torch_available():
    return True


def is_torch_greater_or_equal(library_version, accept_dev=False):
    return True


def is_torch_flex_attn_available():
    return False


def is_torch_sdpa_available():
    return True


def is_torchdynamo_compiling():
    return False


def is_torch_xla_available(check_is_tpu=False, check_is_gpu=False):
    return False


def is_torch_xpu_available(check_device=False):
    return False


def is_torch_npu_available(check_device=False):
    return False


def is_torch_mlu_available(check_device=False):
    return False


def is_torch_fx_available():
    return True


def is_flash_attn_2_available():
    return False


def is_flash_attn_greater_or_equal(library_version):
    return False


def is_flash_attn_greater_or_equal_2_10():
    return False


def is_accelerate_available(min_version=None):
    return False


def is_kernels_available():
    return False


def is_peft_available():
    return False


def is_tf_available():
    return False


def is_flax_available():
    return False


def is_scipy_available():
    return False


def is_vision_available():
    return False


def is_timm_available():
    return False


def is_tokenizers_available():
    return False


def is_sentencepiece_available():
    return False


def is_bitsandbytes_available():
    return False


def is_causal_conv1d_available():
    return False


def is_mamba_ssm_available():
    return False


def is_mamba_2_ssm_available():
    return False


def is_torch_cuda_available():
    return False


def is_speech_available():
    return False


def is_librosa_available():
    return False


def is_soundfile_available():
    return False


def is_torchaudio_available():
    return False


def is_protobuf_available():
    return False
