"""HF GPT-2 style: Conv1D weights stored [in, out] and applied with addmm, manual attention, a head tied to the embedding through F.linear."""
import torch
import torch.nn as nn
import torch.nn.functional as F

class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)

class Attention(nn.Module):
    def __init__(self, d=1024, h=16):
        super().__init__()
        self.h = h
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).permute(0, 2, 1, 3)
        k = k.view(B, T, self.h, C // self.h).permute(0, 2, 1, 3)
        v = v.view(B, T, self.h, C // self.h).permute(0, 2, 1, 3)
        att = torch.matmul(q, k.transpose(-1, -2)) / (C // self.h) ** 0.5
        att = att.softmax(dim=-1)
        y = torch.matmul(att, v)
        y = y.permute(0, 2, 1, 3).contiguous().view(B, T, C)
        return self.c_proj(y)

class MLP(nn.Module):
    def __init__(self, d=1024):
        super().__init__()
        self.c_fc = Conv1D(4 * d, d)
        self.c_proj = Conv1D(d, 4 * d)
    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(1024)
        self.attn = Attention()
        self.ln_2 = nn.LayerNorm(1024)
        self.mlp = MLP()
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(50304, 1024)
        self.h = nn.ModuleList([Block() for _ in range(4)])
        self.ln_f = nn.LayerNorm(1024)
    def forward(self, idx):
        x = self.wte(idx)
        for b in self.h:
            x = b(x)
        return F.linear(self.ln_f(x), self.wte.weight)

model = Model()
