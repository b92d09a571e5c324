# shardlens' model of mamba_ssm.ops.triton.layer_norm (not the library itself): the fused (add +) norm kernels as torch.
import torch
import torch.nn.functional as F
from torch import nn


def layer_norm_fn(x, weight, bias, residual=None, x1=None, weight1=None, bias1=None, eps=1e-6, dropout_p=0.0,
                  rowscale=None, prenorm=False, residual_in_fp32=False, zero_centered_weight=False, is_rms_norm=False,
                  return_dropout_mask=False, out_dtype=None, out=None, residual_out=None):
    """(x + residual) normalised; with prenorm also returns the summed residual."""
    dtype = x.dtype
    if residual is not None:
        x = x + residual
    residual = x.float() if residual_in_fp32 else x
    if zero_centered_weight:
        weight = weight + 1.0
    if is_rms_norm:
        xf = x.float()
        out = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight
        if bias is not None:
            out = out + bias
    else:
        out = F.layer_norm(x.float(), x.shape[-1:], weight.float(), None if bias is None else bias.float(), eps)
    out = out.to(dtype if out_dtype is None else out_dtype)
    if prenorm:
        return out, residual
    return out


def rms_norm_fn(x, weight, bias, residual=None, x1=None, weight1=None, bias1=None, eps=1e-6, dropout_p=0.0,
                rowscale=None, prenorm=False, residual_in_fp32=False, zero_centered_weight=False,
                return_dropout_mask=False, out_dtype=None, out=None, residual_out=None):
    return layer_norm_fn(x, weight, bias, residual=residual, eps=eps, dropout_p=dropout_p, prenorm=prenorm,
                         residual_in_fp32=residual_in_fp32, zero_centered_weight=zero_centered_weight,
                         is_rms_norm=True, out_dtype=out_dtype)


class RMSNorm(nn.Module):
    """weight (hidden_size,), no bias."""

    def __init__(self, hidden_size, eps=1e-5, dropout_p=0.0, zero_centered_weight=False, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.drop = nn.Dropout(dropout_p) if dropout_p > 0.0 else None
        self.zero_centered_weight = zero_centered_weight
        self.weight = nn.Parameter(torch.empty(hidden_size, device=device, dtype=dtype))
        self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.zero_centered_weight:
            nn.init.zeros_(self.weight)
        else:
            nn.init.ones_(self.weight)

    def forward(self, x, residual=None, prenorm=False, residual_in_fp32=False):
        return rms_norm_fn(x, self.weight, self.bias, residual=residual, eps=self.eps, prenorm=prenorm,
                           residual_in_fp32=residual_in_fp32, zero_centered_weight=self.zero_centered_weight)
