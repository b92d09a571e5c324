# shardlens' model of diffusers.models.cache_utils (not the library itself): inference caching switches, no structure.


class CacheMixin:
    _cache_config = None

    @property
    def is_cache_enabled(self):
        return self._cache_config is not None

    def enable_cache(self, config):
        self._cache_config = config

    def disable_cache(self):
        self._cache_config = None
