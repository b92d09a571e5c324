# shardlens' model of diffusers.image_processor (not the library itself): image pre/post-processing is not modelled.


class VaeImageProcessor:
    def __init__(self, *args, **kwargs):
        pass


class IPAdapterMaskProcessor(VaeImageProcessor):
    pass
