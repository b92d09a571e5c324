# shardlens' model of megatron.core.fusions.fused_bias_dropout (not the library itself): bias + dropout + residual.
import torch


def _bias_dropout_add(x_with_bias, residual, prob, training):
    x, bias = x_with_bias
    if bias is not None:
        x = x + bias
    out = torch.nn.functional.dropout(x, p=prob, training=training)
    return residual + out


def bias_dropout_add_unfused(training):
    def _bias_dropout_add_func(x_with_bias, residual, prob):
        return _bias_dropout_add(x_with_bias, residual, prob, training)

    return _bias_dropout_add_func


def get_bias_dropout_add(training, fused):
    """A function (x_with_bias: (x, bias or None), residual, dropout prob) -> residual + dropout(x + bias)."""
    return bias_dropout_add_unfused(training)
