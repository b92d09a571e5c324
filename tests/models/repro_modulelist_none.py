# Reduced from deepseek_v3.py: nn.ModuleList holding None for experts owned by
# other ranks (torch skips None entries); shardlens raises "TypeError: NoneType
# is not a Module subclass" and finds no model.
import torch.nn as nn


class MoE(nn.Module):
    def __init__(self, n_routed_experts=8, start=0, end=4):
        super().__init__()
        self.experts = nn.ModuleList([nn.Linear(16, 16) if start <= i < end else None
                                      for i in range(n_routed_experts)])


model = MoE()
