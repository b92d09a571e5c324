# shardlens' stand-in for torchtitan.models.llama3.model.state_dict_adapter (not the package itself): checkpoint key mapping, not modelled.


class Llama3StateDictAdapter:
    def __init__(self, model_args, hf_assets_path=None):
        self.model_args = model_args
        self.hf_assets_path = hf_assets_path

    def to_hf(self, state_dict):
        raise NotImplementedError("shardlens does not convert checkpoints")

    def from_hf(self, hf_state_dict):
        raise NotImplementedError("shardlens does not convert checkpoints")
