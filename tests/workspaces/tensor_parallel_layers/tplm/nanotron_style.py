# A small nanotron-style MLP written for shardlens' tests.
from nanotron.parallel.tensor_parallel.enum import TensorParallelLinearMode
from nanotron.parallel.tensor_parallel.nn import TensorParallelColumnLinear, TensorParallelEmbedding, TensorParallelRowLinear
from torch import nn


class NanoMLP(nn.Module):
    def __init__(self, vocab, dim, hidden, pg=None):
        super().__init__()
        mode = TensorParallelLinearMode.ALL_REDUCE
        self.embed = TensorParallelEmbedding(vocab, dim, pg=pg, mode=mode)
        self.up = TensorParallelColumnLinear(dim, hidden, pg=pg, mode=mode, bias=False)
        self.down = TensorParallelRowLinear(hidden, dim, pg=pg, mode=mode, bias=True)

    def forward(self, ids):
        return self.down(self.up(self.embed(ids)).relu())
