# Reduced from diffusers' Lumina 2 (written here): forward() requires a padding mask over the text
# tokens (encoder_attention_mask, [batch, text tokens]); it sums the mask into each caption's real
# length and reads the lengths with tolist(), then masks attention with it. Before: "could not tell
# the shape of forward input 'encoder_attention_mask'", and forward() was left untraced.
import torch
import torch.nn as nn
import torch.nn.functional as F


class JointAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(~mask.bool().view(b, 1, 1, s), float("-inf"))
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d))


class TextConditionedDiT(nn.Module):
    def __init__(self, in_channels=4, patch=2, dim=64, heads=4, text_dim=48, layers=2):
        super().__init__()
        self.in_channels, self.patch = in_channels, patch
        self.x_embedder = nn.Linear(in_channels * patch * patch, dim)
        self.caption_embedder = nn.Sequential(nn.LayerNorm(text_dim), nn.Linear(text_dim, dim))
        self.time_embedder = nn.Sequential(nn.Linear(32, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.blocks = nn.ModuleList([JointAttention(dim, heads) for _ in range(layers)])
        self.proj_out = nn.Linear(dim, in_channels * patch * patch)

    def forward(self, hidden_states, timestep, encoder_hidden_states, encoder_attention_mask):
        batch, channels, height, width = hidden_states.shape
        p = self.patch
        x = hidden_states.view(batch, channels, height // p, p, width // p, p).permute(0, 2, 4, 1, 3, 5).flatten(3).flatten(1, 2)
        x = self.x_embedder(x)
        text_lengths = encoder_attention_mask.sum(dim=1).tolist()
        text = self.caption_embedder(encoder_hidden_states)
        # each caption's real tokens first, then the image's patches
        joint = torch.cat([torch.cat([text[i : i + 1, :n], x[i : i + 1]], dim=1) for i, n in enumerate(text_lengths)])
        mask = torch.ones(joint.shape[:2], dtype=torch.bool)
        freqs = torch.exp(-torch.arange(16, dtype=torch.float32) / 16)
        t = self.time_embedder(torch.cat([torch.cos(timestep[:, None] * freqs), torch.sin(timestep[:, None] * freqs)], dim=-1))
        joint = joint + t[:, None]
        for block in self.blocks:
            joint = joint + block(joint, mask)
        return self.proj_out(joint[:, -x.shape[1] :])


model = TextConditionedDiT()
