# shardlens' model of megatron.core.fusions.fused_layer_norm (not the library itself): apex's fused LayerNorm as torch.
import numbers

import torch
from torch.nn import init
from torch.nn.parameter import Parameter


class FusedLayerNorm(torch.nn.Module):
    """LayerNorm with weight and bias (hidden_size,); zero_centered_gamma stores weight - 1."""

    def __init__(self, config, hidden_size, eps=1e-5, persist_layer_norm=True, zero_centered_gamma=False,
                 normalization="LayerNorm"):
        super().__init__()
        self.config = config
        self.zero_centered_gamma = self.config.layernorm_zero_centered_gamma
        assert self.config.normalization == "LayerNorm", f"({self.config.normalization}) is not supported in FusedLayerNorm"
        if isinstance(hidden_size, numbers.Integral):
            hidden_size = (hidden_size,)
        self.hidden_size = torch.Size(hidden_size)
        self.eps = eps
        self.weight = Parameter(torch.empty(*hidden_size))
        self.bias = Parameter(torch.empty(*hidden_size))
        self.reset_parameters()
        self.persist_layer_norm = persist_layer_norm
        self.sequence_parallel = self.config.sequence_parallel
        setattr(self.weight, "sequence_parallel", self.sequence_parallel)
        setattr(self.bias, "sequence_parallel", self.sequence_parallel)

    def reset_parameters(self):
        if self.zero_centered_gamma:
            init.zeros_(self.weight)
            init.zeros_(self.bias)
        else:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        weight = self.weight + 1 if self.zero_centered_gamma else self.weight
        return torch.nn.functional.layer_norm(input, self.hidden_size, weight, self.bias, self.eps)
