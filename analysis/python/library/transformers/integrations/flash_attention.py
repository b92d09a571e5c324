# shardlens' model of transformers.integrations.flash_attention (not the library itself): same tensor semantics as sdpa.
from .sdpa_attention import sdpa_attention_forward


def flash_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, sliding_window=None,
                            softcap=None, **kwargs):
    # flash-attn takes no 4D mask (a 2D padding mask at most): attention is causal unless the module says otherwise
    return sdpa_attention_forward(module, query, key, value, None, dropout=dropout, scaling=scaling,
                                  is_causal=getattr(module, "is_causal", True))
