# A small Mamba-style language model written for shardlens' tests on mamba_ssm's kernels and norms (fused kernels
# modelled in torch; causal_conv1d absent, so the nn.Conv1d path is taken).
import math

import torch
import torch.nn.functional as F
from einops import rearrange, repeat
from torch import nn

from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
from mamba_ssm.ops.triton.layer_norm import RMSNorm, rms_norm_fn

try:
    from causal_conv1d import causal_conv1d_fn
except ImportError:
    causal_conv1d_fn = None


class Mixer(nn.Module):
    def __init__(self, d_model, d_state=8, d_conv=4, expand=2):
        super().__init__()
        self.d_inner = expand * d_model
        self.d_state = d_state
        self.dt_rank = math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv1d = nn.Conv1d(self.d_inner, self.d_inner, d_conv, groups=self.d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, bias=True)
        A = repeat(torch.arange(1, d_state + 1, dtype=torch.float32), "n -> d n", d=self.d_inner).contiguous()
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, hidden_states):
        length = hidden_states.shape[1]
        xz = rearrange(self.in_proj(hidden_states), "b l d -> b d l")
        x, z = xz.chunk(2, dim=1)
        x = F.silu(self.conv1d(x)[..., :length])
        x_dbl = self.x_proj(rearrange(x, "b d l -> (b l) d"))
        dt, B, C = torch.split(x_dbl, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = rearrange(self.dt_proj.weight @ dt.t(), "d (b l) -> b d l", l=length)
        B = rearrange(B, "(b l) n -> b n l", l=length)
        C = rearrange(C, "(b l) n -> b n l", l=length)
        y = selective_scan_fn(x, dt, -torch.exp(self.A_log.float()), B, C, self.D.float(), z=z,
                              delta_bias=self.dt_proj.bias.float(), delta_softplus=True)
        return self.out_proj(rearrange(y, "b d l -> b l d"))


class MiniMambaLM(nn.Module):
    def __init__(self, vocab_size=256, d_model=32, n_layer=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.mixers = nn.ModuleList([Mixer(d_model) for _ in range(n_layer)])
        self.norms = nn.ModuleList([RMSNorm(d_model, eps=1e-5) for _ in range(n_layer)])
        self.norm_f = RMSNorm(d_model, eps=1e-5)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, input_ids):
        hidden = self.embedding(input_ids)
        residual = None
        for norm, mixer in zip(self.norms, self.mixers):
            normed, residual = rms_norm_fn(hidden, norm.weight, None, residual=residual, prenorm=True, eps=norm.eps)
            hidden = mixer(normed)
        hidden = rms_norm_fn(hidden, self.norm_f.weight, None, residual=residual, eps=self.norm_f.eps)
        return self.lm_head(hidden)
