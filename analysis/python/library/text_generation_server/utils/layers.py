# shardlens' model of text_generation_server.utils.layers (not the package itself): where older TGI versions kept the same layers.
from ..layers.tensor_parallel import (
    FastLinear,
    TensorParallelColumnLinear,
    TensorParallelEmbedding,
    TensorParallelHead,
    TensorParallelRowLinear,
    get_linear,
)
