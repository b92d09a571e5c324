# shardlens' model of mamba_ssm.ops.selective_scan_interface (not the library itself): the selective scan kernels,
# written as the scan's closed (quadratic) form in plain torch so that a traced forward sees their tensor shapes.
import torch
import torch.nn.functional as F


def _per_channel(M, dim, length):
    """B or C as (batch, dim, state, length): from (dim, state), (batch, state, length) or (batch, groups, state, length)."""
    if M.dim() == 2:
        return M[None, :, :, None]
    if M.dim() == 3:
        return M[:, None, :, :]
    return M.repeat_interleave(dim // M.shape[1], dim=1)


def selective_scan_fn(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    """u, delta: (batch, dim, length); A: (dim, state) -> y: (batch, dim, length) [, last state (batch, dim, state)].
    x_t = exp(delta_t A) x_{t-1} + delta_t B_t u_t,  y_t = C_t . x_t + D u_t, gated by silu(z)."""
    dtype_in = u.dtype
    u = u.float()
    delta = delta.float()
    if delta_bias is not None:
        delta = delta + delta_bias[..., None].float()
    if delta_softplus:
        delta = F.softplus(delta)
    batch, dim, length = u.shape
    B = _per_channel(B.float(), dim, length)
    C = _per_channel(C.float(), dim, length)
    cumulative = torch.cumsum(delta[..., None] * A[None, :, None, :], dim=2)  # (b, d, l, n)
    decay = torch.exp(cumulative[:, :, :, None, :] - cumulative[:, :, None, :, :])  # (b, d, t, s, n)
    causal = torch.ones(length, length, dtype=torch.bool, device=u.device).tril()
    decay = decay.masked_fill(~causal[None, None, :, :, None], 0.0)
    inputs = (delta * u)[:, :, :, None] * B.transpose(2, 3)  # (b, d, s, n)
    y = torch.einsum("bdtsn,bdsn,bdnt->bdt", decay, inputs, C.expand(batch, dim, C.shape[2], length))
    out = y if D is None else y + u * D.float()[..., None]
    if z is not None:
        out = out * F.silu(z.float())
    out = out.to(dtype_in)
    if return_last_state:
        last_state = torch.einsum("bdsn,bdsn->bdn", decay[:, :, -1], inputs)
        return out, last_state
    return out


def mamba_inner_fn(xz, conv1d_weight, conv1d_bias, x_proj_weight, delta_proj_weight, out_proj_weight, out_proj_bias,
                   A, B=None, C=None, D=None, delta_bias=None, B_proj_bias=None, C_proj_bias=None, delta_softplus=True,
                   checkpoint_lvl=1, b_rms_weight=None, c_rms_weight=None, dt_rms_weight=None, b_c_dt_rms_eps=1e-6):
    """The fused Mamba block: xz (batch, 2 * d_inner, length) -> (batch, length, d_model)."""
    length = xz.shape[-1]
    delta_rank = delta_proj_weight.shape[1]
    d_state = A.shape[-1]
    x, z = xz.chunk(2, dim=1)
    x = F.silu(F.conv1d(x, conv1d_weight, conv1d_bias, padding=conv1d_weight.shape[-1] - 1, groups=x.shape[1])[..., :length])
    x_dbl = F.linear(x.transpose(1, 2).reshape(-1, x.shape[1]), x_proj_weight)  # (b * l, rank + 2 * state)
    delta = delta_proj_weight @ x_dbl[:, :delta_rank].t()  # (d, b * l)
    delta = delta.reshape(delta.shape[0], -1, length).transpose(0, 1)  # (b, d, l)
    if B is None:
        B = x_dbl[:, delta_rank : delta_rank + d_state]
        if B_proj_bias is not None:
            B = B + B_proj_bias
        B = B.reshape(-1, length, d_state).transpose(1, 2)
    if C is None:
        C = x_dbl[:, -d_state:]
        if C_proj_bias is not None:
            C = C + C_proj_bias
        C = C.reshape(-1, length, d_state).transpose(1, 2)
    y = selective_scan_fn(x, delta, A, B, C, D, z=z, delta_bias=delta_bias, delta_softplus=True)
    return F.linear(y.transpose(1, 2), out_proj_weight, out_proj_bias)


def mamba_inner_ref(*args, **kwargs):
    return mamba_inner_fn(*args, **kwargs)


def selective_scan_ref(*args, **kwargs):
    return selective_scan_fn(*args, **kwargs)
