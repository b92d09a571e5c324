# shardlens' model of fairscale.nn.model_parallel (not the library itself).
from . import initialize
from .layers import ColumnParallelLinear, ParallelEmbedding, RowParallelLinear, VocabParallelEmbedding
