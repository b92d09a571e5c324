# shardlens' model of the `flash_attn` package (not the library itself): its attention functions on [batch, seq,
# heads, head_dim] tensors (varlen: [total tokens, heads, head_dim], sequences packed one after another), computed as
# F.scaled_dot_product_attention computes them (the kernels differ; the tensor shapes and the attention do not).
# Imported inside `try: ... except ImportError:` it is absent (its CUDA kernels are not installed on the devices
# planned for), so code with a fallback takes its PyTorch path.
import torch.nn.functional as F

from _shardlens_common.imports import absent_where_optional

absent_where_optional("flash_attn")


def _heads_first(t, seq_dim):
    return t.transpose(seq_dim, seq_dim + 1)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
    """softmax(q kᵀ · scale) v per head; [B, S, H, D] in and out."""
    out = F.scaled_dot_product_attention(_heads_first(q, 1), _heads_first(k, 1), _heads_first(v, 1), is_causal=causal,
                                         scale=softmax_scale)
    return out.transpose(1, 2)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                           dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
    """[total, H, D] in and out: attention over the whole pack (exact for one sequence, an upper bound of the work
    for several)."""
    out = F.scaled_dot_product_attention(_heads_first(q, 0), _heads_first(k, 0), _heads_first(v, 0), is_causal=causal,
                                         scale=softmax_scale)
    return out.transpose(0, 1)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
    """qkv: [B, S, 3, H, D]."""
    return flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], dropout_p, softmax_scale, causal)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
    """kv: [B, S, 2, H, D]."""
    return flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], dropout_p, softmax_scale, causal)
