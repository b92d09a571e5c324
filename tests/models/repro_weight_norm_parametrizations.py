# Reduced from HF wav2vec2 / HuBERT positional conv embeddings: `weight_norm =
# nn.utils.parametrizations.weight_norm` when it exists (PyTorch 2.1+), else the old
# `nn.utils.weight_norm`; shardlens: "condition could not be evaluated; neither branch was
# analysed: 'torch.nn.utils.parametrizations.weight_norm' is not modelled".
# The ground truth (torch 1.13, which has no parametrizations.weight_norm) builds the same
# parametrization with torch's own register_parametrization: original0 (g) and original1 (v)
# under <module>.parametrizations.weight, as PyTorch 2.1+ names them.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize


class _WeightNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return torch._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return torch.norm_except_dim(weight, 2, self.dim), weight


def _weight_norm_by_parametrize(module, name="weight", dim=0):
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


weight_norm = getattr(nn.utils.parametrizations, "weight_norm", _weight_norm_by_parametrize)


class PositionalConvEmbedding(nn.Module):
    def __init__(self, hidden=256, kernel=16, groups=8):
        super().__init__()
        self.conv = nn.Conv1d(hidden, hidden, kernel_size=kernel, padding=kernel // 2, groups=groups)
        self.conv = weight_norm(self.conv, name="weight", dim=2)
        # The older API on a second conv: weight_g / weight_v on the module itself.
        self.gate = nn.utils.weight_norm(nn.Conv1d(hidden, hidden, 1), name="weight", dim=0)

    def forward(self, x):
        y = self.conv(x.transpose(1, 2))[:, :, :-1]
        return F.gelu(self.gate(y)).transpose(1, 2)


class Encoder(nn.Module):
    def __init__(self, features=64, hidden=256):
        super().__init__()
        self.feature_projection = nn.Linear(features, hidden)
        self.pos_conv_embed = PositionalConvEmbedding(hidden)
        self.layer_norm = nn.LayerNorm(hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, features):
        hidden_states = self.feature_projection(features)
        hidden_states = hidden_states + self.pos_conv_embed(hidden_states)
        return self.proj(self.layer_norm(hidden_states))


model = Encoder()
