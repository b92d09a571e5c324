# shardlens' model of text_generation_server.layers.tensor_parallel (not the package itself). TGI builds these from checkpoint
# shards (.load(config, prefix, weights, bias)); here they also wrap a full-size layer (world size 1), and
# shardlens_layout records the split the real layer makes.
import torch
import torch.nn.functional as F
from torch import nn


class FastLinear(nn.Module):
    def __init__(self, weight, bias):
        super().__init__()
        self.weight = nn.Parameter(weight, requires_grad=False)
        if bias is not None:
            self.bias = nn.Parameter(bias, requires_grad=False)
        else:
            self.bias = None

    @classmethod
    def load(cls, config, prefix, weights, bias):
        weight = weights.get_tensor(f"{prefix}.weight")
        bias_tensor = weights.get_tensor(f"{prefix}.bias") if bias else None
        return cls(weight, bias_tensor)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)


def get_linear(weight, bias, quantize=None):
    return FastLinear(weight, bias)


class SuperLayer(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        return self.linear.forward(x)


class TensorParallelHead(SuperLayer):
    def __init__(self, linear, process_group=None, should_gather=False):
        super().__init__(linear)
        self.process_group = process_group
        self.should_gather = should_gather
        self.shardlens_layout = "column"

    @staticmethod
    def load(config, prefix, weights):
        return TensorParallelHead(get_linear(weights.get_tensor(f"{prefix}.weight"), None), weights.process_group)


class TensorParallelColumnLinear(SuperLayer):
    """Output features split across ranks."""

    def __init__(self, linear):
        super().__init__(linear)
        self.shardlens_layout = "column"

    @classmethod
    def load(cls, config, prefix, weights, bias):
        return cls.load_multi(config, [prefix], weights, bias, dim=0)

    @classmethod
    def load_qkv(cls, config, prefix, weights, bias, num_heads=None, num_key_value_heads=None):
        weight = weights.get_tensor(f"{prefix}.weight")
        bias_tensor = weights.get_tensor(f"{prefix}.bias") if bias else None
        return cls(get_linear(weight, bias_tensor))

    @classmethod
    def load_multi(cls, config, prefixes, weights, bias, dim):
        weight = torch.cat([weights.get_tensor(f"{p}.weight") for p in prefixes], dim=dim)
        bias_tensor = torch.cat([weights.get_tensor(f"{p}.bias") for p in prefixes], dim=0) if bias else None
        return cls(get_linear(weight, bias_tensor))


class TensorParallelRowLinear(SuperLayer):
    """Input features split across ranks, outputs all-reduced."""

    def __init__(self, linear, process_group=None):
        super().__init__(linear)
        self.process_group = process_group
        self.shardlens_layout = "row"

    @classmethod
    def load(cls, config, prefix, weights, bias):
        weight = weights.get_tensor(f"{prefix}.weight")
        bias_tensor = weights.get_tensor(f"{prefix}.bias") if bias else None
        return cls(get_linear(weight, bias_tensor), process_group=getattr(weights, "process_group", None))

    def forward(self, input, reduce=True):
        return super().forward(input)


class TensorParallelEmbedding(nn.Module):
    """Embedding rows (the vocabulary) split across ranks: weight (num_embeddings, dim)."""

    def __init__(self, prefix, weights, reduce=True):
        super().__init__()
        weight = weights.get_tensor(f"{prefix}.weight")
        self.min_id = 0
        self.max_id = weight.shape[0]
        self.null_idx = weight.shape[0]
        self.process_group = getattr(weights, "process_group", None)
        self.reduce = reduce
        self.weight = nn.Parameter(weight, requires_grad=False)
        self.shardlens_layout = "vocab"

    def forward(self, input):
        return F.embedding(input, self.weight)
