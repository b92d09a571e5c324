# shardlens' model of the `huggingface_hub` package (not the library itself): the local cache lookup, never the network.
from . import constants
from .file_download import hf_hub_download, try_to_load_from_cache
from .hub_mixin import ModelHubMixin, PyTorchModelHubMixin
