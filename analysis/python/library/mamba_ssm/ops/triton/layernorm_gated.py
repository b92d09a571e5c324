# shardlens' model of mamba_ssm.ops.triton.layernorm_gated (not the library itself): the gated RMSNorm as torch.
import torch
import torch.nn.functional as F
from torch import nn


def rmsnorm_fn(x, weight, bias, z=None, eps=1e-6, group_size=None, norm_before_gate=True):
    dtype = x.dtype
    x = x.float()
    if z is not None and not norm_before_gate:
        x = x * F.silu(z.float())
    if group_size is None:
        out = x * torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + eps)
    else:
        shape = x.shape
        grouped = x.reshape(*shape[:-1], shape[-1] // group_size, group_size)
        grouped = grouped * torch.rsqrt(grouped.square().mean(dim=-1, keepdim=True) + eps)
        out = grouped.reshape(shape)
    out = out * weight
    if bias is not None:
        out = out + bias
    if z is not None and norm_before_gate:
        out = out * F.silu(z.float())
    return out.to(dtype)


class RMSNorm(nn.Module):
    """weight (hidden_size,), no bias; forward(x, z) gates with silu(z) before or after normalising."""

    def __init__(self, hidden_size, eps=1e-5, group_size=None, norm_before_gate=True, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(hidden_size, device=device, dtype=dtype))
        self.register_parameter("bias", None)
        self.group_size = group_size
        self.norm_before_gate = norm_before_gate
        nn.init.ones_(self.weight)

    def forward(self, x, z=None):
        return rmsnorm_fn(x, self.weight, self.bias, z=z, eps=self.eps, group_size=self.group_size,
                          norm_before_gate=self.norm_before_gate)
