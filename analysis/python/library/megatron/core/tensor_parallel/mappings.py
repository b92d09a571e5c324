# shardlens' model of megatron.core.tensor_parallel.mappings (not the library itself): over a world of one every
# copy / gather / scatter / reduce is the identity.
from _shardlens_common.world_of_one import identity

copy_to_tensor_model_parallel_region = identity
reduce_from_tensor_model_parallel_region = identity
scatter_to_tensor_model_parallel_region = identity
gather_from_tensor_model_parallel_region = identity
scatter_to_sequence_parallel_region = identity
gather_from_sequence_parallel_region = identity
reduce_scatter_to_sequence_parallel_region = identity
all_gather_to_context_parallel_region = identity
