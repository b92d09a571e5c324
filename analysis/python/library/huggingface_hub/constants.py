# shardlens' model of huggingface_hub.constants (not the library itself): where the local cache lives.
import os

_default_home = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "huggingface")
HF_HOME = os.path.expanduser(os.environ.get("HF_HOME", _default_home))
HF_HUB_CACHE = os.path.expanduser(
    os.environ.get("HF_HUB_CACHE", os.environ.get("HUGGINGFACE_HUB_CACHE", os.path.join(HF_HOME, "hub")))
)
HUGGINGFACE_HUB_CACHE = HF_HUB_CACHE
DEFAULT_REVISION = "main"
REPO_TYPE_MODEL = "model"
CONFIG_NAME = "config.json"
