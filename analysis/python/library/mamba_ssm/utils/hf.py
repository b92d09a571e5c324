# shardlens' model of mamba_ssm.utils.hf (not the library itself): config.json from the local Hugging Face cache.
import json

from huggingface_hub import hf_hub_download


def load_config_hf(model_name):
    with open(hf_hub_download(model_name, "config.json")) as f:
        return json.load(f)


def load_state_dict_hf(model_name, device=None, dtype=None):
    raise NotImplementedError(
        f"shardlens does not read weights ({model_name}): build the model from its config, "
        "e.g. MambaLMHeadModel(MambaConfig(**load_config_hf(name)))"
    )
