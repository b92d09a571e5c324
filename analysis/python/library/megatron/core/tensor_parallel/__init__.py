# shardlens' model of megatron.core.tensor_parallel (not the library itself): tensor-parallel layers at their full
# logical shapes, collectives over a world of one.
from .cross_entropy import vocab_parallel_cross_entropy
from .data import broadcast_data
from .layers import (
    ColumnParallelLinear,
    RowParallelLinear,
    VocabParallelEmbedding,
    copy_tensor_model_parallel_attributes,
    linear_with_grad_accumulation_and_async_allreduce,
    param_is_not_tensor_parallel_duplicate,
    set_defaults_if_not_set_tensor_model_parallel_attributes,
    set_tensor_model_parallel_attributes,
)
from .mappings import (
    copy_to_tensor_model_parallel_region,
    gather_from_sequence_parallel_region,
    gather_from_tensor_model_parallel_region,
    reduce_from_tensor_model_parallel_region,
    reduce_scatter_to_sequence_parallel_region,
    scatter_to_sequence_parallel_region,
    scatter_to_tensor_model_parallel_region,
)
from .random import checkpoint, get_cuda_rng_tracker, get_data_parallel_rng_tracker_name, model_parallel_cuda_manual_seed
from .utils import gather_split_1d_tensor, split_tensor_along_last_dim, split_tensor_into_1d_equal_chunks
