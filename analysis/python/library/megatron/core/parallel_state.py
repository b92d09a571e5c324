# shardlens' model of megatron.core.parallel_state (not the library itself): one process, so every model-parallel
# world size is 1 and every rank 0. The sizes a script asks initialize_model_parallel for are recorded (they are the
# plan the script already has), but layers are built whole, at their full logical shapes.

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


def get_tensor_model_parallel_world_size():
    return 1


def get_tensor_model_parallel_rank():
    return 0


def get_tensor_model_parallel_src_rank():
    return 0


def get_tensor_model_parallel_group(check_initialized=True):
    return None


def get_pipeline_model_parallel_world_size():
    return 1


def get_pipeline_model_parallel_rank():
    return 0


def get_pipeline_model_parallel_group():
    return None


def get_pipeline_model_parallel_first_rank():
    return 0


def get_pipeline_model_parallel_last_rank():
    return 0


def get_pipeline_model_parallel_split_rank():
    return None


def get_virtual_pipeline_model_parallel_world_size():
    return None


def get_virtual_pipeline_model_parallel_rank():
    return None


def set_virtual_pipeline_model_parallel_rank(rank):
    pass


def is_pipeline_first_stage(ignore_virtual=False):
    return True


def is_pipeline_last_stage(ignore_virtual=False):
    return True


def get_model_parallel_group():
    return None


def get_data_parallel_world_size(with_context_parallel=False):
    return 1


def get_data_parallel_rank(with_context_parallel=False):
    return 0


def get_data_parallel_group(with_context_parallel=False):
    return None


def get_context_parallel_world_size():
    return 1


def get_context_parallel_rank():
    return 0


def get_context_parallel_group(check_initialized=True):
    return None


def get_expert_model_parallel_world_size():
    return 1


def get_expert_model_parallel_rank():
    return 0


def get_expert_model_parallel_group():
    return None


def get_tensor_and_expert_parallel_world_size():
    return 1


def get_tensor_and_expert_parallel_group():
    return None


def get_tensor_and_data_parallel_group(with_context_parallel=False):
    return None


def get_data_modulo_expert_parallel_rank():
    return 0


def get_data_modulo_expert_parallel_group():
    return None


def get_embedding_group():
    return None


def get_position_embedding_group():
    return None


def is_rank_in_embedding_group(ignore_virtual=False):
    return False


def is_rank_in_position_embedding_group():
    return False


def get_amax_reduction_group(with_context_parallel=False):
    return None
