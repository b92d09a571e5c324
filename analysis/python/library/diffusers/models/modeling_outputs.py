# shardlens' model of diffusers.models.modeling_outputs (not the library itself): output dataclasses.
from _shardlens_common.outputs import output_dataclass

from ..utils import BaseOutput

AutoencoderKLOutput = output_dataclass("AutoencoderKLOutput", BaseOutput, "latent_dist")
Transformer2DModelOutput = output_dataclass("Transformer2DModelOutput", BaseOutput, "sample")
