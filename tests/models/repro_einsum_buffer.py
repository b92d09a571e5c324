# Reduced from gpt_neox.py: rotary cos/sin caches computed with
# torch.einsum("i,j->ij", t, inv_freq); shardlens: "cat/stack of tensors whose
# shape is unknown" and the two buffers are dropped.
import torch
import torch.nn as nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim=32, max_position_embeddings=2048, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        t = torch.arange(max_position_embeddings, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :], persistent=False)


model = RotaryEmbedding()
