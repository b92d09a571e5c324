# shardlens' model of mamba_ssm.distributed.tensor_parallel (not the library itself): the tensor-parallel linears at
# their full logical shapes (world size 1); shardlens_layout records the split the real layer makes.
from torch import nn


class _ParallelLinear(nn.Linear):
    """An nn.Linear that keeps its process group and records the split the real layer makes (`layout`)."""

    layout = None

    def __init__(self, in_features, out_features, process_group=None, bias=True, sequence_parallel=True,
                 multiple_of=1, device=None, dtype=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.process_group = process_group
        self.sequence_parallel = sequence_parallel
        self.shardlens_layout = self.layout


class ColumnParallelLinear(_ParallelLinear):
    """Output features split across the process group: (out_features, in_features) here."""

    layout = "column"


class RowParallelLinear(_ParallelLinear):
    """Input features split across the process group (output all-reduced): (out_features, in_features) here."""

    layout = "row"


class ParallelEmbeddings(nn.Module):
    def __init__(self, embed_dim, vocab_size, max_position_embeddings, process_group=None, padding_idx=None,
                 sequence_parallel=True, device=None, dtype=None):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx, device=device, dtype=dtype)
        self.word_embeddings.shardlens_layout = "vocab"
        self.max_position_embeddings = max_position_embeddings
        if max_position_embeddings > 0:
            self.position_embeddings = nn.Embedding(max_position_embeddings, embed_dim, device=device, dtype=dtype)

    def forward(self, input_ids, position_ids=None, combine_batch_seqlen_dim=False):
        embeddings = self.word_embeddings(input_ids)
        if self.max_position_embeddings > 0 and position_ids is not None:
            embeddings = embeddings + self.position_embeddings(position_ids)
        return embeddings
