# shardlens' model of mamba_ssm.ops.triton.ssd_combined (not the library itself): the Mamba-2 state space duality
# kernels, written as their quadratic (attention-like) form in plain torch.
import torch
import torch.nn.functional as F

from .layernorm_gated import rmsnorm_fn


def mamba_chunk_scan_combined(x, dt, A, B, C, chunk_size, D=None, z=None, dt_bias=None, initial_states=None,
                              seq_idx=None, cu_seqlens=None, dt_softplus=False, dt_limit=(0.0, float("inf")),
                              return_final_states=False, return_varlen_states=False):
    """x (batch, length, heads, head_dim), dt (batch, length, heads), A (heads,), B/C (batch, length, groups, state)
    -> y (batch, length, heads, head_dim) [, final states (batch, heads, head_dim, state)]."""
    dtype = x.dtype
    if dt_bias is not None:
        dt = dt + dt_bias
    if dt_softplus:
        dt = F.softplus(dt)
    if dt_limit != (0.0, float("inf")):
        dt = dt.clamp(min=dt_limit[0], max=dt_limit[1])
    batch, length, nheads, headdim = x.shape
    B = B.repeat_interleave(nheads // B.shape[2], dim=2)  # (b, l, h, n)
    C = C.repeat_interleave(nheads // C.shape[2], dim=2)
    cumulative = torch.cumsum(dt * A, dim=1)  # (b, l, h)
    decay = torch.exp(cumulative[:, :, None, :] - cumulative[:, None, :, :])  # (b, t, s, h)
    causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
    decay = decay.masked_fill(~causal[None, :, :, None], 0.0)
    scores = torch.einsum("bthn,bshn->btsh", C.float(), B.float()) * decay
    y = torch.einsum("btsh,bsh,bshp->bthp", scores, dt.float(), x.float())
    if D is not None:
        y = y + x.float() * (D[:, None] if D.dim() == 1 else D)
    if z is not None:
        y = y * F.silu(z.float())
    y = y.to(dtype)
    if return_final_states:
        weights = torch.exp(cumulative[:, -1:, :] - cumulative) * dt  # (b, s, h)
        final_states = torch.einsum("bsh,bshn,bshp->bhpn", weights, B.float(), x.float())
        return y, final_states
    return y


def _causal_conv1d(x, weight, bias, activation):
    """x (batch, dim, length), weight (dim, width): depthwise causal convolution."""
    width = weight.shape[-1]
    out = F.conv1d(x, weight.unsqueeze(1), bias, padding=width - 1, groups=x.shape[1])[..., : x.shape[-1]]
    if activation in ("silu", "swish"):
        out = F.silu(out)
    return out


def mamba_split_conv1d_scan_combined(zxbcdt, conv1d_weight, conv1d_bias, dt_bias, A, D, chunk_size,
                                     initial_states=None, seq_idx=None, dt_limit=(0.0, float("inf")),
                                     return_final_states=False, activation="silu", rmsnorm_weight=None,
                                     rmsnorm_eps=1e-6, outproj_weight=None, outproj_bias=None, headdim=None,
                                     ngroups=1, norm_before_gate=True):
    """The whole Mamba-2 mixer after in_proj: zxbcdt (batch, length, ...) -> (batch, length, d_model or d_inner)."""
    if D.dim() == 1:
        nheads = D.shape[0]
    else:
        nheads, headdim = D.shape
    batch, length, _ = zxbcdt.shape
    dim = nheads * headdim
    dstate = (zxbcdt.shape[-1] - 2 * dim - nheads) // ngroups // 2
    z, xBC, dt = torch.split(zxbcdt, [dim, dim + 2 * ngroups * dstate, nheads], dim=-1)
    xBC = _causal_conv1d(xBC.transpose(1, 2), conv1d_weight, conv1d_bias, activation).transpose(1, 2)
    x, B, C = torch.split(xBC, [dim, ngroups * dstate, ngroups * dstate], dim=-1)
    x = x.reshape(batch, length, nheads, headdim)
    B = B.reshape(batch, length, ngroups, dstate)
    C = C.reshape(batch, length, ngroups, dstate)
    z = z.reshape(batch, length, nheads, headdim)
    out = mamba_chunk_scan_combined(x, dt, A, B, C, chunk_size, D=D, z=z if rmsnorm_weight is None else None,
                                    dt_bias=dt_bias, dt_softplus=True, dt_limit=dt_limit)
    out = out.reshape(batch, length, dim)
    if rmsnorm_weight is not None:
        out = rmsnorm_fn(out, rmsnorm_weight, None, z=z.reshape(batch, length, dim), eps=rmsnorm_eps,
                         norm_before_gate=norm_before_gate)
    if outproj_weight is not None:
        out = F.linear(out, outproj_weight, outproj_bias)
    return out
