# shardlens' model of transformers.integrations.flex_attention (not the library itself): flex attention is reported unavailable.


def make_flex_block_causal_mask(attention_mask_2d, attention_chunk_size=None, query_length=None, key_length=None, offsets=None, is_causal=True):
    raise ImportError("flex attention is not available in shardlens' model of transformers")


def flex_attention_forward(*args, **kwargs):
    raise ImportError("flex attention is not available in shardlens' model of transformers")


def compile_friendly_flex_attention(*args, **kwargs):
    raise ImportError("flex attention is not available in shardlens' model of transformers")


class BlockMask:
    """Flex attention's block mask: a type that model code names in annotations and isinstance checks."""
