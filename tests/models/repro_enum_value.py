# Reduced from conformer_enum.py: enum.Enum members. shardlens treats members as
# their raw values: `PosEnc.REL.value` raises "'str' object has no attribute
# 'value'", `NormType("batch_norm") is NormType.BATCH` is silently False, and
# enum.auto() is not analysed.
import enum

import torch.nn as nn


class NormType(enum.Enum):
    BATCH = "batch_norm"
    LAYER = "layer_norm"


class ConvModule(nn.Module):
    def __init__(self, d_model=256, norm_type="batch_norm"):
        super().__init__()
        norm = NormType(norm_type)
        if norm is NormType.BATCH:
            self.norm = nn.BatchNorm1d(d_model)
        elif norm.value == "layer_norm":
            self.norm = nn.LayerNorm(d_model)


model = ConvModule()
