# shardlens' stand-in for torchtitan.protocols.model (not the package itself): the model-args base class.
from dataclasses import dataclass

# dict[str, BlockMask] | BlockMask in the real package: used in annotations only
AttentionMasksType = object


@dataclass
class BaseModelArgs:
    _enforced: str = "This field is used to enforce all fields have defaults."

    def update_from_config(self, job_config, **kwargs):
        pass

    def get_nparams_and_flops(self, model, seq_len):
        raise NotImplementedError
