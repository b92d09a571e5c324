# shardlens' model of text_generation_server.layers (not the package itself).
from .tensor_parallel import (
    FastLinear,
    TensorParallelColumnLinear,
    TensorParallelEmbedding,
    TensorParallelHead,
    TensorParallelRowLinear,
    get_linear,
)

__all__ = ["FastLinear", "TensorParallelColumnLinear", "TensorParallelEmbedding", "TensorParallelHead",
           "TensorParallelRowLinear", "get_linear"]
