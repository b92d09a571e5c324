# shardlens' model of xformers.ops.fmha.attn_bias (not the library itself): attention masks that materialize into
# additive (0 / -inf) tensors.
import torch


class AttentionBias:
    def materialize(self, shape, dtype=torch.float32, device="cpu"):
        raise NotImplementedError


class LowerTriangularMask(AttentionBias):
    def materialize(self, shape, dtype=torch.float32, device="cpu"):
        allowed = torch.ones(shape[-2], shape[-1], dtype=torch.bool, device=device).tril()
        mask = torch.zeros(shape[-2], shape[-1], dtype=dtype, device=device).masked_fill(~allowed, float("-inf"))
        return mask.expand(shape)


class BlockDiagonalMask(AttentionBias):
    """Several sequences packed into one: each query attends to the keys of its own sequence (optionally causally,
    optionally within a local window)."""

    def __init__(self, q_seqlen, k_seqlen, causal=False, window_size=None):
        self.q_seqlen = list(q_seqlen)
        self.k_seqlen = list(k_seqlen)
        self.causal = causal
        self.window_size = window_size

    @classmethod
    def from_seqlens(cls, q_seqlen, kv_seqlen=None, kv_padding=None):
        return cls(q_seqlen, q_seqlen if kv_seqlen is None else kv_seqlen)

    def make_causal(self):
        return BlockDiagonalCausalMask(self.q_seqlen, self.k_seqlen, causal=True)

    def make_causal_from_bottomright(self):
        return BlockDiagonalCausalMask(self.q_seqlen, self.k_seqlen, causal=True)

    def make_local_attention(self, window_size):
        return BlockDiagonalCausalLocalAttentionMask(self.q_seqlen, self.k_seqlen, causal=True, window_size=window_size)

    def materialize(self, shape, dtype=torch.float32, device="cpu"):
        allowed = torch.zeros(shape[-2], shape[-1], dtype=torch.bool, device=device)
        q_start = 0
        k_start = 0
        for q_len, k_len in zip(self.q_seqlen, self.k_seqlen):
            block = torch.ones(q_len, k_len, dtype=torch.bool, device=device)
            if self.causal:
                block = block.tril()
            if self.window_size is not None:
                block = block & torch.ones(q_len, k_len, dtype=torch.bool, device=device).triu(1 - self.window_size)
            allowed[q_start : q_start + q_len, k_start : k_start + k_len] = block
            q_start += q_len
            k_start += k_len
        mask = torch.zeros(shape[-2], shape[-1], dtype=dtype, device=device).masked_fill(~allowed, float("-inf"))
        return mask.expand(shape)


class BlockDiagonalCausalMask(BlockDiagonalMask):
    def __init__(self, q_seqlen, k_seqlen, causal=True, window_size=None):
        super().__init__(q_seqlen, k_seqlen, causal=True, window_size=window_size)

    @classmethod
    def from_seqlens(cls, q_seqlen, kv_seqlen=None, kv_padding=None):
        return cls(q_seqlen, q_seqlen if kv_seqlen is None else kv_seqlen)


class BlockDiagonalCausalLocalAttentionMask(BlockDiagonalCausalMask):
    pass
