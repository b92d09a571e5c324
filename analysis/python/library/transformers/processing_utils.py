# shardlens' model of transformers.processing_utils (not the library itself): Unpack for `**kwargs: Unpack[...]`.


class _Unpack:
    def __getitem__(self, item):
        return item


Unpack = _Unpack()


class ProcessorMixin:
    pass
