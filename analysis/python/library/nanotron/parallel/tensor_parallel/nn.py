# shardlens' model of nanotron.parallel.tensor_parallel.nn (not the library itself): the layers at their full
# logical shapes (the process group's size is not divided out); shardlens_layout records the split.
import torch.nn.functional as F
from torch import nn


class TensorParallelColumnLinear(nn.Linear):
    def __init__(self, in_features, out_features, pg=None, mode=None, bias=True, device=None, dtype=None,
                 async_communication=False, contiguous_chunks=None, tp_recompute_allgather=True):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.pg = pg
        self.mode = mode
        self.shardlens_layout = "column"


class TensorParallelRowLinear(nn.Linear):
    def __init__(self, in_features, out_features, pg=None, mode=None, bias=True, device=None, dtype=None,
                 async_communication=False, contiguous_chunks=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.pg = pg
        self.mode = mode
        self.shardlens_layout = "row"


class TensorParallelEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, pg=None, mode=None, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None,
                 contiguous_chunks=None):
        super().__init__(num_embeddings, embedding_dim, padding_idx=padding_idx, max_norm=max_norm,
                         norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=_weight,
                         device=device, dtype=dtype)
        self.pg = pg
        self.mode = mode
        self.shardlens_layout = "vocab"
