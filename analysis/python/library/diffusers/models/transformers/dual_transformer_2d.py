# shardlens' model of diffusers.models.transformers.dual_transformer_2d (not the library itself): a placeholder.
# shardlens: partial model (an installed diffusers has the whole module: it is read instead when on the search path)
# DualTransformer2DModel is model code, not library core: put diffusers' own source on the search path to build it.


class DualTransformer2DModel:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "shardlens' model of diffusers has no DualTransformer2DModel: put diffusers' source on the search path"
        )
