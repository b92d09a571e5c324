# shardlens' model of megatron.core.parallel_state (not the library itself): one process, so every model-parallel
# world size is 1 and every rank 0. The sizes a script asks initialize_model_parallel for are recorded (they are the
# plan the script already has), but layers are built whole, at their full logical shapes.
from _shardlens_common.answers import answer

_REQUESTED = {
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "virtual_pipeline_model_parallel_size": None,
    "context_parallel_size": 1,
    "expert_model_parallel_size": 1,
}
_INITIALIZED = False


def initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
                              virtual_pipeline_model_parallel_size=None, pipeline_model_parallel_split_rank=None,
                              use_sharp=False, context_parallel_size=1, expert_model_parallel_size=1, nccl_communicator_config_path=None,
                              **kwargs):
    global _INITIALIZED
    _REQUESTED["tensor_model_parallel_size"] = tensor_model_parallel_size
    _REQUESTED["pipeline_model_parallel_size"] = pipeline_model_parallel_size
    _REQUESTED["virtual_pipeline_model_parallel_size"] = virtual_pipeline_model_parallel_size
    _REQUESTED["context_parallel_size"] = context_parallel_size
    _REQUESTED["expert_model_parallel_size"] = expert_model_parallel_size
    _INITIALIZED = True


def requested_parallel_sizes():
    """The sizes the script asked for (shardlens reads them as the script's existing plan)."""
    return dict(_REQUESTED)


def model_parallel_is_initialized():
    return _INITIALIZED


def destroy_model_parallel():
    global _INITIALIZED
    _INITIALIZED = False


# Every other query has one answer in a world of one process.
# sizes
(get_tensor_model_parallel_world_size, get_pipeline_model_parallel_world_size, get_data_parallel_world_size,
 get_context_parallel_world_size, get_expert_model_parallel_world_size, get_tensor_and_expert_parallel_world_size,
 ) = [answer(1)] * 6
# ranks
(get_tensor_model_parallel_rank, get_tensor_model_parallel_src_rank, get_pipeline_model_parallel_rank,
 get_pipeline_model_parallel_first_rank, get_pipeline_model_parallel_last_rank, get_data_parallel_rank,
 get_context_parallel_rank, get_expert_model_parallel_rank, get_data_modulo_expert_parallel_rank,
 ) = [answer(0)] * 9
# groups (and the sizes, ranks and split of a virtual pipeline: there is none)
(get_tensor_model_parallel_group, get_pipeline_model_parallel_group, get_pipeline_model_parallel_split_rank,
 get_virtual_pipeline_model_parallel_world_size, get_virtual_pipeline_model_parallel_rank,
 set_virtual_pipeline_model_parallel_rank, get_model_parallel_group, get_data_parallel_group,
 get_context_parallel_group, get_expert_model_parallel_group, get_tensor_and_expert_parallel_group,
 get_tensor_and_data_parallel_group, get_data_modulo_expert_parallel_group, get_embedding_group,
 get_position_embedding_group, get_amax_reduction_group,
 ) = [answer(None)] * 16
# every stage is the first and the last
(is_pipeline_first_stage, is_pipeline_last_stage,
 ) = [answer(True)] * 2
# no rank is in an embedding group
(is_rank_in_embedding_group, is_rank_in_position_embedding_group,
 ) = [answer(False)] * 2
