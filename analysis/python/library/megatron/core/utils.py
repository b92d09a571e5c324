# shardlens' model of megatron.core.utils (not the library itself): arithmetic and tensor helpers.
import math

import torch


def ensure_divisibility(numerator, denominator):
    assert numerator % denominator == 0, f"{numerator} is not divisible by {denominator}"


def divide(numerator, denominator):
    ensure_divisibility(numerator, denominator)
    return numerator // denominator


def init_method_normal(sigma):
    def init_(tensor):
        return torch.nn.init.normal_(tensor, mean=0.0, std=sigma)

    return init_


def scaled_init_method_normal(sigma, num_layers):
    std = sigma / math.sqrt(2.0 * num_layers)

    def init_(tensor):
        return torch.nn.init.normal_(tensor, mean=0.0, std=std)

    return init_


def make_viewless_tensor(inp, requires_grad, keep_graph):
    return inp


def assert_viewless_tensor(tensor, extra_msg=None):
    return tensor


def safely_set_viewless_tensor_data(tensor, new_data_tensor):
    tensor.data = new_data_tensor


def get_attr_wrapped_model(model, attr, allow_none=True, return_model_obj=False):
    while not hasattr(model, attr) and hasattr(model, "module"):
        model = model.module
    return model if return_model_obj else getattr(model, attr, None)


def get_model_config(model):
    return get_attr_wrapped_model(model, "config", allow_none=False)


def get_model_type(model):
    return get_attr_wrapped_model(model, "model_type")


def make_sharded_tensor_for_checkpoint(tensor, key, prepend_offsets=(), replica_id=None, **kwargs):
    from .dist_checkpointing.mapping import ShardedTensor

    return ShardedTensor(key, tensor)


def make_tp_sharded_tensor_for_checkpoint(tensor, key, tp_axis=0, replica_id=None, prepend_offsets=(), **kwargs):
    from .dist_checkpointing.mapping import ShardedTensor

    return ShardedTensor(key, tensor)


class GlobalMemoryBuffer:
    def get_tensor(self, tensor_shape, dtype, name):
        return torch.empty(tensor_shape, dtype=dtype)
