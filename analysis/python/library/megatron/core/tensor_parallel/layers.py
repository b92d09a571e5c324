# shardlens' model of megatron.core.tensor_parallel.layers (not the library itself). The real layers hold 1/tp of
# their weight on each rank; these hold the whole logical weight (world size 1), and `shardlens_layout` records the
# split the real layer makes: "column" (output features), "row" (input features), "vocab" (embedding rows).
import torch
import torch.nn.functional as F
from torch.nn.parameter import Parameter

from _shardlens_common.attributes import set_attributes

_MODEL_PARALLEL_ATTRIBUTE_DEFAULTS = {"tensor_model_parallel": False, "partition_dim": -1, "partition_stride": 1}


def param_is_not_tensor_parallel_duplicate(param):
    return True  # every parameter lives on rank 0 of a world of one


def set_tensor_model_parallel_attributes(tensor, is_parallel, dim, stride):
    setattr(tensor, "tensor_model_parallel", is_parallel)
    setattr(tensor, "partition_dim", dim)
    setattr(tensor, "partition_stride", stride)


def set_defaults_if_not_set_tensor_model_parallel_attributes(tensor):
    for attribute, value in _MODEL_PARALLEL_ATTRIBUTE_DEFAULTS.items():
        if not hasattr(tensor, attribute):
            setattr(tensor, attribute, value)


def copy_tensor_model_parallel_attributes(destination_tensor, source_tensor):
    for attribute in _MODEL_PARALLEL_ATTRIBUTE_DEFAULTS:
        if hasattr(source_tensor, attribute):
            setattr(destination_tensor, attribute, getattr(source_tensor, attribute))


def _initialize_affine_weight_gpu(weight, init_method, partition_dim, stride=1):
    set_tensor_model_parallel_attributes(tensor=weight, is_parallel=True, dim=partition_dim, stride=stride)
    with torch.no_grad():
        init_method(weight)


def _initialize_affine_weight_cpu(weight, output_size, input_size, per_partition_size, partition_dim, init_method,
                                  stride=1, return_master_weight=False, *, params_dtype=torch.float32):
    set_tensor_model_parallel_attributes(tensor=weight, is_parallel=True, dim=partition_dim, stride=stride)
    with torch.no_grad():
        init_method(weight)
    if return_master_weight:
        return weight
    return None


def linear_with_grad_accumulation_and_async_allreduce(input, weight, bias, gradient_accumulation_fusion=False,
                                                      async_grad_allreduce=False, sequence_parallel=False,
                                                      grad_output_buffer=None, **kwargs):
    return F.linear(input, weight, bias)


class VocabParallelEmbedding(torch.nn.Module):
    """Embedding whose rows (the vocabulary) are split across tensor-parallel ranks: weight (num_embeddings, dim)."""

    def __init__(self, num_embeddings, embedding_dim, *, init_method, config):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.tensor_model_parallel_size = 1
        self.vocab_start_index = 0
        self.vocab_end_index = num_embeddings
        self.num_embeddings_per_partition = num_embeddings
        self.weight = Parameter(torch.empty(num_embeddings, embedding_dim, dtype=config.params_dtype))
        if config.perform_initialization:
            _initialize_affine_weight_gpu(self.weight, init_method, partition_dim=0, stride=1)
        self.shardlens_layout = "vocab"

    def forward(self, input_):
        return F.embedding(input_, self.weight)


class _ParallelLinear(torch.nn.Module):
    """What both linears keep: their sizes, the config, and the expert and sequence-parallel flags."""

    def __init__(self, input_size, output_size, config, skip_bias_add, is_expert):
        super().__init__()
        set_attributes(self, input_size=input_size, output_size=output_size, skip_bias_add=skip_bias_add, config=config,
                       is_expert=is_expert, expert_parallel=config.expert_model_parallel_size > 1,
                       sequence_parallel=config.sequence_parallel)


class ColumnParallelLinear(_ParallelLinear):
    """Y = XA + b with A split by columns (output features): weight (output_size, input_size).
    forward(input, weight=None) -> (output, bias if skip_bias_add else None)."""

    def __init__(self, input_size, output_size, *, config, init_method, bias=True, gather_output=False, stride=1,
                 keep_master_weight_for_test=False, skip_bias_add=False, skip_weight_param_allocation=False,
                 embedding_activation_buffer=None, grad_output_buffer=None, is_expert=False,
                 tp_comm_buffer_name=None):
        super().__init__(input_size, output_size, config, skip_bias_add, is_expert)
        self.gather_output = gather_output
        self.output_size_per_partition = output_size
        if not skip_weight_param_allocation:
            self.weight = Parameter(torch.empty(self.output_size_per_partition, self.input_size, dtype=config.params_dtype))
            if config.perform_initialization:
                _initialize_affine_weight_gpu(self.weight, init_method, partition_dim=0, stride=stride)
        else:
            self.weight = None
        if bias:
            self.bias = Parameter(torch.empty(self.output_size_per_partition, dtype=config.params_dtype))
            set_tensor_model_parallel_attributes(self.bias, True, 0, stride)
            with torch.no_grad():
                self.bias.zero_()
        else:
            self.register_parameter("bias", None)
        self.shardlens_layout = "column"

    def forward(self, input_, weight=None):
        if weight is None:
            weight = self.weight
        bias = self.bias if not self.skip_bias_add else None
        output = F.linear(input_, weight, bias)
        output_bias = self.bias if self.skip_bias_add else None
        return output, output_bias


class RowParallelLinear(_ParallelLinear):
    """Y = XA + b with A split by rows (input features), outputs all-reduced: weight (output_size, input_size).
    forward(input) -> (output, bias if skip_bias_add else None)."""

    def __init__(self, input_size, output_size, *, config, init_method, bias, input_is_parallel, skip_bias_add,
                 stride=1, keep_master_weight_for_test=False, is_expert=False, tp_comm_buffer_name=None):
        super().__init__(input_size, output_size, config, skip_bias_add, is_expert)
        self.input_is_parallel = input_is_parallel
        self.input_size_per_partition = input_size
        if self.sequence_parallel and not self.input_is_parallel:
            raise RuntimeError("To enable `sequence_parallel`, `input_is_parallel` must be `True`")
        self.weight = Parameter(torch.empty(self.output_size, self.input_size_per_partition, dtype=config.params_dtype))
        if config.perform_initialization:
            _initialize_affine_weight_gpu(self.weight, init_method, partition_dim=1, stride=stride)
        if bias:
            self.bias = Parameter(torch.empty(self.output_size, dtype=config.params_dtype))
            with torch.no_grad():
                self.bias.zero_()
            setattr(self.bias, "sequence_parallel", self.sequence_parallel)
        else:
            self.register_parameter("bias", None)
        self.shardlens_layout = "row"

    def forward(self, input_):
        output_ = F.linear(input_, self.weight)
        if not self.skip_bias_add:
            output = output_ + self.bias if self.bias is not None else output_
            output_bias = None
        else:
            output = output_
            output_bias = self.bias
        return output, output_bias
