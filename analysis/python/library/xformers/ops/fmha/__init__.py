# shardlens' model of xformers.ops.fmha (not the library itself): memory_efficient_attention on [B, M, H, K] tensors,
# computed as F.scaled_dot_product_attention computes it (the kernels differ; the tensor shapes and the attention do not).
import torch.nn.functional as F

from . import attn_bias
from .attn_bias import LowerTriangularMask


def memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, scale=None, *, op=None, output_dtype=None):
    """softmax(q kᵀ · scale) v per head; [B, M, H, K] in, [B, M, H, Kv] out. A causal bias masks the future; a
    block-diagonal one keeps packed sequences apart (attention over the whole pack here: exact for one sequence,
    an upper bound of the work for several)."""
    causal = getattr(attn_bias, "_causal", False)
    out = F.scaled_dot_product_attention(
        query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), dropout_p=p, is_causal=causal, scale=scale
    )
    out = out.transpose(1, 2)
    return out if output_dtype is None else out.to(output_dtype)
