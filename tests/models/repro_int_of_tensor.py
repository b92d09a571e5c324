# Reduced from conformer_enum.py (NeMo ConvSubsampling/calc_length): a layer
# width from `int(...)` of 0-dim tensor arithmetic with torch.div/torch.floor;
# shardlens: "'torch.div' is not modelled" / "int() of a tensor value", and the
# parameter is emitted with `"shape": null` (check_inspect.py then crashes).
import torch
import torch.nn as nn


class ConvSubsampling(nn.Module):
    def __init__(self, feat_in=80, conv_channels=256, feat_out=512):
        super().__init__()
        lengths = torch.tensor(feat_in, dtype=torch.float)
        for _ in range(2):
            lengths = torch.floor(torch.div(lengths + (2 - 3), 2) + 1.0)
        self.out = nn.Linear(conv_channels * int(lengths), feat_out)


model = ConvSubsampling()
