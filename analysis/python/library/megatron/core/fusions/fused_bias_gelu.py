# shardlens' model of megatron.core.fusions.fused_bias_gelu (not the library itself): gelu(x + bias), tanh form.
import torch


def bias_gelu(bias, y):
    x = bias + y
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def bias_gelu_impl(input, bias):
    return bias_gelu(bias, input)
