# shardlens' model of mamba_ssm.ops.triton.selective_state_update (not the library itself): one decoding step as torch.
import torch
import torch.nn.functional as F


def selective_state_update(state, x, dt, A, B, C, D=None, z=None, dt_bias=None, dt_softplus=False,
                           state_batch_indices=None):
    """state (batch, dim, state) or (batch, heads, head_dim, state), updated in place; returns y shaped like x."""
    has_heads = state.dim() > 3
    if not has_heads:
        state = state.unsqueeze(1)
        x = x.unsqueeze(1)
        dt = dt.unsqueeze(1)
        A = A.unsqueeze(0)
        B = B.unsqueeze(1)
        C = C.unsqueeze(1)
        if D is not None:
            D = D.unsqueeze(0)
        if z is not None:
            z = z.unsqueeze(1)
        if dt_bias is not None:
            dt_bias = dt_bias.unsqueeze(0)
    nheads = state.shape[1]
    if dt_bias is not None:
        dt = dt + dt_bias
    if dt_softplus:
        dt = F.softplus(dt)
    dA = torch.exp(dt.unsqueeze(-1) * A)  # (b, h, p, n)
    B = B.repeat_interleave(nheads // B.shape[1], dim=1)  # (b, h, n)
    C = C.repeat_interleave(nheads // C.shape[1], dim=1)
    dB = dt.unsqueeze(-1) * B.unsqueeze(-2)  # (b, h, p, n)
    state.copy_(state * dA + dB * x.unsqueeze(-1))
    out = torch.einsum("bhpn,bhn->bhp", state.to(C.dtype), C)
    if D is not None:
        out = out + x * D
    if z is not None:
        out = out * F.silu(z)
    if not has_heads:
        out = out.squeeze(1)
    return out
