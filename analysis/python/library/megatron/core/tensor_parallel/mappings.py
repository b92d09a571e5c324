# shardlens' model of megatron.core.tensor_parallel.mappings (not the library itself): over a world of one every
# copy / gather / scatter / reduce is the identity.


def copy_to_tensor_model_parallel_region(input_):
    return input_


def reduce_from_tensor_model_parallel_region(input_):
    return input_


def scatter_to_tensor_model_parallel_region(input_):
    return input_


def gather_from_tensor_model_parallel_region(input_):
    return input_


def scatter_to_sequence_parallel_region(input_):
    return input_


def gather_from_sequence_parallel_region(input_, tensor_parallel_output_grad=True):
    return input_


def reduce_scatter_to_sequence_parallel_region(input_):
    return input_


def all_gather_to_context_parallel_region(input_):
    return input_
