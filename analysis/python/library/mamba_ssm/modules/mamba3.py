# shardlens' stand-in for mamba_ssm.modules.mamba3 (not the library itself): a placeholder for a layer this model
# does not describe; put mamba_ssm's own source on the search path to build Mamba-3 blocks.
from torch import nn


class Mamba3(nn.Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("shardlens has no model of mamba_ssm's Mamba3: put mamba_ssm's source on the search path")
