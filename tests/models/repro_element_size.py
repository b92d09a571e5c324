# Reduced from deepseek_v3.py: `if self.weight.element_size() == 1:` (fp8 scale
# Parameter); shardlens: "condition could not be evaluated; neither branch was
# analysed: tensor attribute 'element_size' is not modelled".
import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, in_features=256, out_features=512, dtype=torch.bfloat16):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=dtype))
        if self.weight.element_size() == 1:
            self.scale = nn.Parameter(torch.empty(out_features // 128, in_features // 128))
        else:
            self.register_parameter("scale", None)


model = Linear()
