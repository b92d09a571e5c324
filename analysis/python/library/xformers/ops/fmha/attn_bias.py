# shardlens' model of xformers.ops.fmha.attn_bias (not the library itself): the attention biases as markers (causal or
# not, the packed sequences' lengths); memory_efficient_attention reads `_causal`.


class AttentionBias:
    _causal = False


class LowerTriangularMask(AttentionBias):
    _causal = True


class BlockDiagonalMask(AttentionBias):
    """Attention within each of the sequences packed one after another (lengths q_seqlen / kv_seqlen)."""

    def __init__(self, q_seqlen=None, kv_seqlen=None):
        self.q_seqlen = q_seqlen
        self.kv_seqlen = kv_seqlen if kv_seqlen is not None else q_seqlen

    @classmethod
    def from_seqlens(cls, q_seqlen, kv_seqlen=None, **kwargs):
        return cls(list(q_seqlen), None if kv_seqlen is None else list(kv_seqlen))

    def make_causal(self):
        return BlockDiagonalCausalMask(self.q_seqlen, self.kv_seqlen)

    def make_causal_from_bottomright(self):
        return BlockDiagonalCausalFromBottomRightMask(self.q_seqlen, self.kv_seqlen)

    def make_local_attention(self, window_size):
        return BlockDiagonalCausalLocalAttentionMask(self.q_seqlen, self.kv_seqlen)


class BlockDiagonalCausalMask(BlockDiagonalMask):
    _causal = True


class BlockDiagonalCausalFromBottomRightMask(BlockDiagonalCausalMask):
    pass


class BlockDiagonalCausalLocalAttentionMask(BlockDiagonalCausalMask):
    pass


class BlockDiagonalCausalWithOffsetPaddedKeysMask(BlockDiagonalCausalMask):
    @classmethod
    def from_seqlens(cls, q_seqlen, kv_padding=None, kv_seqlen=None, **kwargs):
        return cls(list(q_seqlen), None if kv_seqlen is None else list(kv_seqlen))
