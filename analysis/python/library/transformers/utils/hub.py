# shardlens' model of transformers.utils.hub (not the library itself): finding a model's file in a folder or the local cache.
import os

from huggingface_hub import hf_hub_download

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "pytorch_model.bin"
SAFE_WEIGHTS_NAME = "model.safetensors"


def cached_file(path_or_repo_id, filename, cache_dir=None, subfolder="", revision=None, **kwargs):
    path_or_repo_id = str(path_or_repo_id)
    if subfolder is None:
        subfolder = ""
    if os.path.isdir(path_or_repo_id):
        resolved = os.path.join(path_or_repo_id, subfolder, filename)
        if not os.path.isfile(resolved):
            raise OSError(f"{path_or_repo_id} does not appear to have a file named {os.path.join(subfolder, filename)}")
        return resolved
    return hf_hub_download(path_or_repo_id, filename, subfolder=subfolder or None, revision=revision, cache_dir=cache_dir)
