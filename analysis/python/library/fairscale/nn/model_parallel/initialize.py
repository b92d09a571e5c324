# shardlens' model of fairscale.nn.model_parallel.initialize (not the library itself): one process, so the
# model-parallel world size is 1; the size a script asks for is recorded as its existing plan.

_REQUESTED_MODEL_PARALLEL_SIZE = None


def initialize_model_parallel(model_parallel_size_, pipeline_length=1, *, model_parallel_backend=None,
                              pipeline_backend=None, ddp_backend=None):
    global _REQUESTED_MODEL_PARALLEL_SIZE
    _REQUESTED_MODEL_PARALLEL_SIZE = model_parallel_size_


def model_parallel_is_initialized():
    return _REQUESTED_MODEL_PARALLEL_SIZE is not None


def requested_model_parallel_size():
    return _REQUESTED_MODEL_PARALLEL_SIZE


def get_model_parallel_world_size():
    return 1


def get_model_parallel_rank():
    return 0


def get_model_parallel_group():
    return None


def get_model_parallel_src_rank():
    return 0


def get_data_parallel_world_size():
    return 1


def get_data_parallel_rank():
    return 0


def get_data_parallel_group():
    return None


def get_pipeline_parallel_group():
    return None


def destroy_model_parallel():
    global _REQUESTED_MODEL_PARALLEL_SIZE
    _REQUESTED_MODEL_PARALLEL_SIZE = None
