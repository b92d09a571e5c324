# shardlens' model of xformers.ops.fmha (not the library itself): memory_efficient_attention on (B, M, H, K) tensors.
import torch
import torch.nn.functional as F

from . import attn_bias


def memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, scale=None, *, op=None, output_dtype=None):
    """query (B, M, H, K), key/value (B, N, H, K) -> (B, M, H, K); attn_bias is None, an additive tensor
    broadcastable to (B, H, M, N), or an xformers mask object."""
    q = query.transpose(1, 2)
    k = key.transpose(1, 2)
    v = value.transpose(1, 2)
    mask = attn_bias
    if attn_bias is not None and not isinstance(attn_bias, torch.Tensor):
        mask = attn_bias.materialize((q.shape[0], q.shape[1], q.shape[2], k.shape[2]), dtype=q.dtype, device=q.device)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, scale=scale)
    return out.transpose(1, 2)
