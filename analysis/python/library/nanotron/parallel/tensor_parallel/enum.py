# shardlens' model of nanotron.parallel.tensor_parallel.enum (not the library itself).
from enum import Enum


class TensorParallelLinearMode(Enum):
    ALL_REDUCE = 1
    REDUCE_SCATTER = 2
