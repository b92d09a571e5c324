# shardlens' model of huggingface_hub.file_download (not the library itself): files already in the local cache.
import os

from . import constants


def repo_folder_name(repo_id, repo_type="model"):
    # "org/name" -> "models--org--name"
    return repo_type + "s--" + repo_id.replace("/", "--")


def try_to_load_from_cache(repo_id, filename, cache_dir=None, revision=None, repo_type=None):
    """The path of `filename` in the cached snapshot of `repo_id`, or None when it is not cached."""
    if cache_dir is None:
        cache_dir = constants.HF_HUB_CACHE
    if revision is None:
        revision = constants.DEFAULT_REVISION
    if repo_type is None:
        repo_type = "model"
    repo_cache = os.path.join(str(cache_dir), repo_folder_name(repo_id, repo_type))
    snapshots = os.path.join(repo_cache, "snapshots")
    if not os.path.isdir(snapshots):
        return None
    ref_file = os.path.join(repo_cache, "refs", revision)
    if os.path.isfile(ref_file):
        with open(ref_file) as f:
            revision = f.read().strip()
    candidate = os.path.join(snapshots, revision, filename)
    if os.path.isfile(candidate):
        return candidate
    # no ref for this revision: any snapshot that has the file
    for snapshot in sorted(os.listdir(snapshots)):
        candidate = os.path.join(snapshots, snapshot, filename)
        if os.path.isfile(candidate):
            return candidate
    return None


def hf_hub_download(repo_id, filename, subfolder=None, repo_type=None, revision=None, cache_dir=None, **kwargs):
    if subfolder:
        filename = subfolder + "/" + filename
    path = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir, revision=revision, repo_type=repo_type)
    if path is None:
        if cache_dir is None:
            cache_dir = constants.HF_HUB_CACHE
        folder = os.path.join(str(cache_dir), repo_folder_name(repo_id, repo_type or "model"), "snapshots")
        raise OSError(
            f"{filename} of '{repo_id}' is not in the local Hugging Face cache (looked in {folder}); "
            f"shardlens never downloads: fetch it with `huggingface-cli download {repo_id} {filename}` "
            f"or pass a local folder that contains it"
        )
    return path
