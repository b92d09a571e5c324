# shardlens' model of huggingface_hub.hub_mixin (not the library itself): mixins that add loading and saving, no structure.
# (The real mixins also accept class keywords such as library_name=...; this model does not.)


class ModelHubMixin:
    pass


class PyTorchModelHubMixin(ModelHubMixin):
    pass
