# shardlens' model of diffusers.utils.torch_utils (not the library itself): small tensor helpers.
import torch

from .import_utils import is_torch_version


def maybe_allow_in_graph(cls):
    return cls


def randn_tensor(shape, generator=None, device=None, dtype=None, layout=None):
    return torch.randn(shape, generator=generator, device=device, dtype=dtype)


def apply_freeu(resolution_idx, hidden_states, res_hidden_states, **freeu_kwargs):
    return hidden_states, res_hidden_states


def maybe_adjust_dtype_for_device(dtype, device):
    # float64 is unsupported on mps/npu; elsewhere the dtype stands
    return dtype


def get_torch_cuda_device_capability():
    return None


def is_compiled_module(module):
    return False


def fourier_filter(x_in, threshold, scale):
    return x_in
