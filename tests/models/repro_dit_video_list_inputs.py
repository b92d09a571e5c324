# Reduced from Wan 2.1's DiT (written here): forward(x, t, context, seq_len) takes lists of videos
# and of text embeddings, iterates them, pads every video's patches to seq_len, and attends with
# flash_attn.flash_attn_varlen_func behind `assert FLASH_ATTN_2_AVAILABLE` (no other path).
import math

import torch
import torch.nn as nn

try:
    import flash_attn

    FLASH_ATTN_2_AVAILABLE = True
except ModuleNotFoundError:
    FLASH_ATTN_2_AVAILABLE = False


def flash_attention(q, k, v, k_lens=None):
    b, lq, lk = q.size(0), q.size(1), k.size(1)
    q = q.flatten(0, 1)
    if k_lens is None:
        k, v = k.flatten(0, 1), v.flatten(0, 1)
        k_lens = torch.tensor([lk] * b, dtype=torch.int32)
    else:
        k = torch.cat([u[:n] for u, n in zip(k, k_lens)])
        v = torch.cat([u[:n] for u, n in zip(v, k_lens)])
    q_lens = torch.tensor([lq] * b, dtype=torch.int32)
    assert FLASH_ATTN_2_AVAILABLE
    x = flash_attn.flash_attn_varlen_func(
        q=q, k=k, v=v,
        cu_seqlens_q=torch.cat([q_lens.new_zeros([1]), q_lens]).cumsum(0, dtype=torch.int32),
        cu_seqlens_k=torch.cat([k_lens.new_zeros([1]), k_lens]).cumsum(0, dtype=torch.int32),
        max_seqlen_q=lq, max_seqlen_k=lk).unflatten(0, (b, lq))
    return x


def rope_params(max_seq_len, dim, theta=10000):
    freqs = torch.outer(torch.arange(max_seq_len), 1.0 / torch.pow(theta, torch.arange(0, dim, 2).to(torch.float64).div(dim)))
    return torch.polar(torch.ones_like(freqs), freqs)


def rope_apply(x, grid_sizes, freqs):
    n, c = x.size(2), x.size(3) // 2
    freqs = freqs.split([c - 2 * (c // 3), c // 3, c // 3], dim=1)
    output = []
    for i, (f, h, w) in enumerate(grid_sizes.tolist()):
        seq_len = f * h * w
        x_i = torch.view_as_complex(x[i, :seq_len].to(torch.float64).reshape(seq_len, n, -1, 2))
        freqs_i = torch.cat([
            freqs[0][:f].view(f, 1, 1, -1).expand(f, h, w, -1),
            freqs[1][:h].view(1, h, 1, -1).expand(f, h, w, -1),
            freqs[2][:w].view(1, 1, w, -1).expand(f, h, w, -1),
        ], dim=-1).reshape(seq_len, 1, -1)
        x_i = torch.view_as_real(x_i * freqs_i).flatten(2)
        output.append(torch.cat([x_i, x[i, seq_len:]]))
    return torch.stack(output).float()


class SelfAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x, seq_lens, grid_sizes, freqs):
        b, s, n, d = *x.shape[:2], self.num_heads, self.head_dim
        q = self.q(x).view(b, s, n, d)
        k = self.k(x).view(b, s, n, d)
        v = self.v(x).view(b, s, n, d)
        x = flash_attention(rope_apply(q, grid_sizes, freqs), rope_apply(k, grid_sizes, freqs), v, k_lens=seq_lens)
        return self.o(x.flatten(2))


class CrossAttention(SelfAttention):
    def forward(self, x, context):
        b, n, d = x.size(0), self.num_heads, self.head_dim
        q = self.q(x).view(b, -1, n, d)
        k = self.k(context).view(b, -1, n, d)
        v = self.v(context).view(b, -1, n, d)
        return self.o(flash_attention(q, k, v).flatten(2))


class Block(nn.Module):
    def __init__(self, dim, ffn_dim, num_heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=False)
        self.self_attn = SelfAttention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.cross_attn = CrossAttention(dim, num_heads)
        self.norm3 = nn.LayerNorm(dim, elementwise_affine=False)
        self.ffn = nn.Sequential(nn.Linear(dim, ffn_dim), nn.GELU(approximate="tanh"), nn.Linear(ffn_dim, dim))
        self.modulation = nn.Parameter(torch.randn(1, 6, dim) / dim**0.5)

    def forward(self, x, e, seq_lens, grid_sizes, freqs, context):
        e = (self.modulation + e).chunk(6, dim=1)
        y = self.self_attn(self.norm1(x).float() * (1 + e[1]) + e[0], seq_lens, grid_sizes, freqs)
        x = x + y * e[2]
        x = x + self.cross_attn(self.norm2(x), context)
        y = self.ffn(self.norm3(x).float() * (1 + e[4]) + e[3])
        return x + y * e[5]


def sinusoidal_embedding_1d(dim, position):
    half = dim // 2
    position = position.type(torch.float64)
    sinusoid = torch.outer(position, torch.pow(10000, -torch.arange(half).to(position).div(half)))
    return torch.cat([torch.cos(sinusoid), torch.sin(sinusoid)], dim=1)


class VideoDiT(nn.Module):
    def __init__(self, patch_size=(1, 2, 2), text_len=64, in_dim=4, dim=128, ffn_dim=256, freq_dim=32, text_dim=96,
                 out_dim=4, num_heads=4, num_layers=2):
        super().__init__()
        self.patch_size, self.text_len, self.dim, self.freq_dim = patch_size, text_len, dim, freq_dim
        self.patch_embedding = nn.Conv3d(in_dim, dim, kernel_size=patch_size, stride=patch_size)
        self.text_embedding = nn.Sequential(nn.Linear(text_dim, dim), nn.GELU(approximate="tanh"), nn.Linear(dim, dim))
        self.time_embedding = nn.Sequential(nn.Linear(freq_dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.time_projection = nn.Sequential(nn.SiLU(), nn.Linear(dim, dim * 6))
        self.blocks = nn.ModuleList([Block(dim, ffn_dim, num_heads) for _ in range(num_layers)])
        self.head = nn.Linear(dim, out_dim * math.prod(patch_size))
        d = dim // num_heads
        self.freqs = torch.cat([rope_params(1024, d - 4 * (d // 6)), rope_params(1024, 2 * (d // 6)), rope_params(1024, 2 * (d // 6))], dim=1)

    def forward(self, x, t, context, seq_len):
        """x: list of videos [C_in, F, H, W]; t: [B]; context: list of text embeddings [L, C]; seq_len: the
        length every video's patches are padded to."""
        x = [self.patch_embedding(u.unsqueeze(0)) for u in x]
        grid_sizes = torch.stack([torch.tensor(u.shape[2:], dtype=torch.long) for u in x])
        x = [u.flatten(2).transpose(1, 2) for u in x]
        seq_lens = torch.tensor([u.size(1) for u in x], dtype=torch.long)
        assert seq_lens.max() <= seq_len
        x = torch.cat([torch.cat([u, u.new_zeros(1, seq_len - u.size(1), u.size(2))], dim=1) for u in x])
        e = self.time_embedding(sinusoidal_embedding_1d(self.freq_dim, t).float())
        e0 = self.time_projection(e).unflatten(1, (6, self.dim))
        context = self.text_embedding(
            torch.stack([torch.cat([u, u.new_zeros(self.text_len - u.size(0), u.size(1))]) for u in context]))
        for block in self.blocks:
            x = block(x, e0, seq_lens, grid_sizes, self.freqs, context)
        return self.head(x)


model = VideoDiT()

