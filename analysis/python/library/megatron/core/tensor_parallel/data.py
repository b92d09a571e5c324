# shardlens' model of megatron.core.tensor_parallel.data (not the library itself): one rank already has the data.


def broadcast_data(keys, data, datatype):
    return {key: data[key] for key in keys}
