# shardlens' model of megatron.core.tensor_parallel.utils (not the library itself).
import torch

from ..utils import divide


def split_tensor_along_last_dim(tensor, num_partitions, contiguous_split_chunks=False):
    last_dim_size = divide(tensor.size()[-1], num_partitions)
    tensor_list = torch.split(tensor, last_dim_size, dim=tensor.dim() - 1)
    if contiguous_split_chunks:
        return tuple(chunk.contiguous() for chunk in tensor_list)
    return tensor_list


def split_tensor_into_1d_equal_chunks(tensor, new_buffer=False):
    return tensor.view(-1)


def gather_split_1d_tensor(tensor):
    return tensor


class VocabUtility:
    @staticmethod
    def vocab_range_from_per_partition_vocab_size(per_partition_vocab_size, rank, world_size):
        index_f = rank * per_partition_vocab_size
        return index_f, index_f + per_partition_vocab_size

    @staticmethod
    def vocab_range_from_global_vocab_size(global_vocab_size, rank, world_size):
        per_partition_vocab_size = divide(global_vocab_size, world_size)
        return VocabUtility.vocab_range_from_per_partition_vocab_size(per_partition_vocab_size, rank, world_size)
