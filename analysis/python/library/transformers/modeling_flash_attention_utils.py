# shardlens' model of transformers.modeling_flash_attention_utils (not the library itself): flash-attn is not installed.


class FlashAttentionKwargs(dict):
    """A TypedDict in the real library: only used in annotations."""


def is_flash_attn_available():
    return False


def _flash_attention_forward(*args, **kwargs):
    raise ImportError("flash_attn is not installed: use attn_implementation='sdpa' or 'eager'")
