# shardlens' model of megatron.core.fusions.fused_bias_swiglu (not the library itself): silu(a) * b of (x + bias).
import torch
import torch.nn.functional as F


def swiglu(y):
    y_1, y_2 = torch.chunk(y, 2, -1)
    return F.silu(y_1) * y_2


def bias_swiglu(y, bias):
    return swiglu(y + bias)


def bias_swiglu_impl(input, bias):
    if bias is not None:
        return bias_swiglu(input, bias)
    return swiglu(input)
