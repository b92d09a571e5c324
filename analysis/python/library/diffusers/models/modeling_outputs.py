# shardlens' model of diffusers.models.modeling_outputs (not the library itself): output dataclasses.
from dataclasses import dataclass
from typing import Any, Optional

from ..utils import BaseOutput


@dataclass
class AutoencoderKLOutput(BaseOutput):
    latent_dist: Optional[Any] = None


@dataclass
class Transformer2DModelOutput(BaseOutput):
    sample: Optional[Any] = None
