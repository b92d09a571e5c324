# shardlens' model of transformers.cache_utils (not the library itself): key/value caches that grow by concatenation.
import torch


class CacheLayerMixin:
    is_compileable = False

    def __init__(self):
        self.keys = None
        self.values = None

    def get_seq_length(self, cache_position=None):
        if self.keys is None:
            return 0
        return self.keys.shape[-2]


class DynamicLayer(CacheLayerMixin):
    def update(self, key_states, value_states, cache_kwargs=None):
        if self.keys is None:
            self.keys = key_states
            self.values = value_states
        else:
            self.keys = torch.cat([self.keys, key_states], dim=-2)
            self.values = torch.cat([self.values, value_states], dim=-2)
        return self.keys, self.values


class StaticLayer(CacheLayerMixin):
    """A preallocated (batch, kv_heads, max_cache_len, head_dim) buffer written at cache_position."""

    def __init__(self, max_cache_len):
        super().__init__()
        self.max_cache_len = max_cache_len

    def update(self, key_states, value_states, cache_kwargs=None):
        if self.keys is None:
            shape = (key_states.shape[0], key_states.shape[1], self.max_cache_len, key_states.shape[-1])
            self.keys = torch.zeros(shape, dtype=key_states.dtype, device=key_states.device)
            self.values = torch.zeros(shape, dtype=value_states.dtype, device=value_states.device)
        cache_position = None if cache_kwargs is None else cache_kwargs.get("cache_position")
        if cache_position is None:
            cache_position = torch.arange(key_states.shape[-2], device=key_states.device)
        self.keys.index_copy_(2, cache_position, key_states)
        self.values.index_copy_(2, cache_position, value_states)
        return self.keys, self.values


class Cache:
    is_compileable = False

    def __init__(self, layers=None, layer_class_to_replicate=None, offloading=False, **kwargs):
        self.layers = [] if layers is None else layers
        self.layer_class_to_replicate = layer_class_to_replicate

    def _new_layer(self):
        return DynamicLayer()

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        while len(self.layers) <= layer_idx:
            self.layers.append(self._new_layer())
        return self.layers[layer_idx].update(key_states, value_states, cache_kwargs)

    def get_seq_length(self, layer_idx=0):
        if layer_idx >= len(self.layers):
            return 0
        return self.layers[layer_idx].get_seq_length()

    def get_mask_sizes(self, cache_position, layer_idx=0):
        kv_length = self.get_seq_length(layer_idx) + cache_position.shape[0]
        return kv_length, 0

    def get_max_cache_shape(self, layer_idx=0):
        return -1

    def __len__(self):
        return len(self.layers)

    def __getitem__(self, layer_idx):
        layer = self.layers[layer_idx]
        return layer.keys, layer.values

    @property
    def is_sliding(self):
        return [False for _ in self.layers]

    def to_legacy_cache(self):
        return tuple((layer.keys, layer.values) for layer in self.layers)

    def reorder_cache(self, beam_idx):
        pass

    def crop(self, max_length):
        pass


class DynamicCache(Cache):
    def __init__(self, ddp_cache_data=None, config=None, offloading=False, offload_only_non_sliding=True, **kwargs):
        super().__init__()
        if ddp_cache_data is not None:
            for key_states, value_states in ddp_cache_data:
                layer = DynamicLayer()
                layer.update(key_states, value_states)
                self.layers.append(layer)

    @classmethod
    def from_legacy_cache(cls, past_key_values=None):
        return cls(ddp_cache_data=past_key_values)


class StaticCache(Cache):
    def __init__(self, config=None, max_cache_len=None, max_batch_size=None, offloading=False, **kwargs):
        super().__init__()
        if max_cache_len is None and config is not None:
            max_cache_len = config.max_position_embeddings
        self.max_cache_len = max_cache_len
        self.max_batch_size = max_batch_size

    def _new_layer(self):
        return StaticLayer(self.max_cache_len)

    def get_max_cache_shape(self, layer_idx=0):
        return self.max_cache_len

    def get_mask_sizes(self, cache_position, layer_idx=0):
        return self.max_cache_len, 0


SlidingWindowCache = StaticCache
HybridCache = StaticCache
HybridChunkedCache = StaticCache
OffloadedCache = DynamicCache
OffloadedStaticCache = StaticCache
QuantizedCache = DynamicCache


class EncoderDecoderCache(Cache):
    def __init__(self, self_attention_cache=None, cross_attention_cache=None, *caches):
        super().__init__()
        if self_attention_cache is None:
            self_attention_cache = DynamicCache()
        if cross_attention_cache is None:
            cross_attention_cache = DynamicCache()
        self.self_attention_cache = self_attention_cache
        self.cross_attention_cache = cross_attention_cache
        self.is_updated = {}

    @classmethod
    def from_legacy_cache(cls, past_key_values=None):
        cache = cls(DynamicCache(), DynamicCache())
        if past_key_values is not None:
            for layer_idx, layer_past in enumerate(past_key_values):
                cache.self_attention_cache.update(layer_past[0], layer_past[1], layer_idx)
                if len(layer_past) > 2:
                    cache.cross_attention_cache.update(layer_past[2], layer_past[3], layer_idx)
                    cache.is_updated[layer_idx] = True
        return cache

    def get_seq_length(self, layer_idx=0):
        return self.self_attention_cache.get_seq_length(layer_idx)

    def get_mask_sizes(self, cache_position, layer_idx=0):
        return self.self_attention_cache.get_mask_sizes(cache_position, layer_idx)

    def __len__(self):
        return len(self.self_attention_cache)

    def to_legacy_cache(self):
        return self.self_attention_cache.to_legacy_cache()
