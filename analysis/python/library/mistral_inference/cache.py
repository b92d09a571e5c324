# shardlens' stand-in for mistral_inference.cache (not the package itself): the decoding KV cache is not modelled (the forward without a cache is).
from dataclasses import dataclass
from typing import Any, List


@dataclass
class CacheInputMetadata:
    positions: Any = None
    to_cache_mask: Any = None
    cached_elements: Any = None
    cache_positions: Any = None
    prefill: bool = True
    mask: Any = None
    seqlens: List[int] = None


class CacheView:
    def __init__(self, cache_k, cache_v, metadata, kv_seqlens):
        self.cache_k = cache_k
        self.cache_v = cache_v
        self.kv_seqlens = kv_seqlens
        self.metadata = metadata


class BufferCache:
    def __init__(self, n_layers, max_batch_size, max_seq_len, n_kv_heads, head_dim, sliding_window=None):
        raise NotImplementedError("shardlens does not model mistral_inference's KV cache: trace the forward without it")
