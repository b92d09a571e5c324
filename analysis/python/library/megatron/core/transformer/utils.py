# shardlens' model of megatron.core.transformer.utils (not the library itself).
import torch

from ..dist_checkpointing.mapping import ShardedObject, ShardedTensor


def get_linear_layer(rows, columns, init_method, perform_initialization=True):
    layer = torch.nn.Linear(rows, columns)
    if perform_initialization:
        init_method(layer.weight)
    with torch.no_grad():
        layer.bias.zero_()
    return layer


def attention_mask_func(attention_scores, attention_mask):
    return attention_scores.masked_fill(attention_mask, -10000.0)


def openai_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


def erf_gelu(x):
    return x * 0.5 * (torch.erf(x / 1.41421).to(dtype=x.dtype) + torch.ones_like(x).to(dtype=x.dtype))


def make_sharded_tensors_for_checkpoint(state_dict, prefix, tensor_parallel_layers_axis_map=None,
                                        sharded_offsets=(), extra_state_suffix="_extra_state"):
    return {prefix + name: ShardedTensor(prefix + name, tensor) for name, tensor in state_dict.items()}


def make_sharded_object_for_checkpoint(obj, key, sharded_offsets=(), replica_id=None, **kwargs):
    return ShardedObject(key, obj)


def sharded_state_dict_default(module, prefix="", sharded_offsets=()):
    if hasattr(module, "sharded_state_dict"):
        return module.sharded_state_dict(prefix=prefix, sharded_offsets=sharded_offsets)
    return make_sharded_tensors_for_checkpoint(module.state_dict(prefix="", keep_vars=True), prefix)
