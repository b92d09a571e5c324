# shardlens' model of megatron.core.transformer.custom_layers.transformer_engine (not the library itself): the
# Transformer Engine layers Megatron wraps, as plain torch modules with TE's parameter names and full logical shapes.
# TE's fused split op and CPU offloading are reported absent (None), as Megatron checks for them.
import torch
import torch.nn.functional as F

from ..enums import AttnMaskType

SplitAlongDim = None
get_cpu_offload_context = None


def _norm(x, weight, bias, eps):
    """te's LayerNorm (with a bias) or RMSNorm (without one) over the last dimension."""
    if bias is not None:
        return F.layer_norm(x, x.shape[-1:], weight, bias, eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class TENorm(torch.nn.Module):
    """te.pytorch.LayerNorm (weight, bias) or te.pytorch.RMSNorm (weight), chosen by config.normalization."""

    def __init__(self, config, hidden_size, eps=1e-5):
        super().__init__()
        self.config = config
        self.normalization = config.normalization
        self.eps = eps
        self.zero_centered_gamma = config.layernorm_zero_centered_gamma
        self.weight = torch.nn.Parameter(torch.ones(hidden_size, dtype=config.params_dtype))
        if config.normalization == "LayerNorm":
            self.bias = torch.nn.Parameter(torch.zeros(hidden_size, dtype=config.params_dtype))
        elif config.normalization == "RMSNorm":
            self.register_parameter("bias", None)
        else:
            raise Exception("Only LayerNorm and RMSNorm are curently supported")

    def forward(self, x):
        weight = self.weight + 1 if self.zero_centered_gamma else self.weight
        return _norm(x, weight, self.bias, self.eps)


def _refuse_unsupported(gather_output=False, input_is_parallel=True, is_expert=False,
                        skip_weight_param_allocation=False):
    """Megatron's errors for the options its Transformer Engine linears do not support."""
    if gather_output:
        raise ValueError("Transformer Engine linear layers do not support gather_output = True")
    if not input_is_parallel:
        raise ValueError("Transformer Engine linear layers do not support input_is_parallel = False")
    if is_expert:
        raise ValueError("Transformer Engine linear layers do not yet support MoE")
    if skip_weight_param_allocation:
        raise ValueError("Transformer Engine linear layers do not support skip_weight_param_allocation")


class _TELinearBase(torch.nn.Module):
    """What te.pytorch.Linear and LayerNormLinear share: weight (output_size, input_size), bias (output_size,), and
    a forward that returns (output, bias if skip_bias_add else None)."""

    def _create_weight_and_bias(self, input_size, output_size, config, init_method, bias):
        self.weight = torch.nn.Parameter(torch.empty(output_size, input_size, dtype=config.params_dtype))
        if config.perform_initialization:
            with torch.no_grad():
                init_method(self.weight)
        if bias:
            self.bias = torch.nn.Parameter(torch.zeros(output_size, dtype=config.params_dtype))
        else:
            self.register_parameter("bias", None)

    def _linear(self, x):
        if self.te_return_bias:
            return F.linear(x, self.weight), self.bias
        return F.linear(x, self.weight, self.bias), None


class TELinear(_TELinearBase):
    """te.pytorch.Linear: weight (output_size, input_size), bias (output_size,).
    forward(x) -> (output, bias if skip_bias_add else None)."""

    def __init__(self, input_size, output_size, *, parallel_mode, config, init_method, bias, skip_bias_add,
                 skip_weight_param_allocation, tp_comm_buffer_name=None):
        super().__init__()
        _refuse_unsupported(skip_weight_param_allocation=skip_weight_param_allocation)
        self.config = config
        self.in_features = input_size
        self.out_features = output_size
        self.parallel_mode = parallel_mode
        self.te_return_bias = skip_bias_add and bias
        self._create_weight_and_bias(input_size, output_size, config, init_method, bias)
        self.shardlens_layout = parallel_mode

    def forward(self, x):
        return self._linear(x)


class TEColumnParallelLinear(TELinear):
    def __init__(self, input_size, output_size, *, config, init_method, gather_output, bias, skip_bias_add, is_expert,
                 skip_weight_param_allocation=False, tp_comm_buffer_name=None):
        _refuse_unsupported(gather_output=gather_output, is_expert=is_expert)
        super().__init__(input_size, output_size, parallel_mode="column", config=config, init_method=init_method,
                         bias=bias, skip_bias_add=skip_bias_add, skip_weight_param_allocation=skip_weight_param_allocation,
                         tp_comm_buffer_name=tp_comm_buffer_name)


class TERowParallelLinear(TELinear):
    def __init__(self, input_size, output_size, *, config, init_method, bias, input_is_parallel, skip_bias_add,
                 is_expert, tp_comm_buffer_name=None):
        _refuse_unsupported(input_is_parallel=input_is_parallel, is_expert=is_expert)
        super().__init__(input_size, output_size, parallel_mode="row", config=config, init_method=init_method,
                         bias=bias, skip_bias_add=skip_bias_add, skip_weight_param_allocation=False,
                         tp_comm_buffer_name=tp_comm_buffer_name)


class TELayerNormColumnParallelLinear(_TELinearBase):
    """te.pytorch.LayerNormLinear: layer_norm_weight, layer_norm_bias (input_size,), then weight (output_size,
    input_size) and bias; a norm fused into a column-parallel linear."""

    def __init__(self, input_size, output_size, *, config, init_method, gather_output, bias, skip_bias_add, is_expert,
                 skip_weight_param_allocation=False, tp_comm_buffer_name=None):
        super().__init__()
        _refuse_unsupported(gather_output=gather_output, is_expert=is_expert,
                            skip_weight_param_allocation=skip_weight_param_allocation)
        self.config = config
        self.eps = config.layernorm_epsilon
        self.zero_centered_gamma = config.layernorm_zero_centered_gamma
        self.te_return_bias = skip_bias_add and bias
        self.layer_norm_weight = torch.nn.Parameter(torch.ones(input_size, dtype=config.params_dtype))
        if config.normalization == "LayerNorm":
            self.layer_norm_bias = torch.nn.Parameter(torch.zeros(input_size, dtype=config.params_dtype))
        else:
            self.register_parameter("layer_norm_bias", None)
        self._create_weight_and_bias(input_size, output_size, config, init_method, bias)
        self.shardlens_layout = "column"

    def forward(self, x):
        weight = self.layer_norm_weight + 1 if self.zero_centered_gamma else self.layer_norm_weight
        return self._linear(_norm(x, weight, self.layer_norm_bias, self.eps))


class TEDotProductAttention(torch.nn.Module):
    """te.pytorch.DotProductAttention on [sequence, batch, heads, head_dim]: no parameters."""

    def __init__(self, config, layer_number, attn_mask_type, attention_type, attention_dropout=None):
        super().__init__()
        self.config = config
        self.layer_number = layer_number
        self.attn_mask_type = attn_mask_type
        self.attention_type = attention_type
        self.attention_dropout = config.attention_dropout if attention_dropout is None else attention_dropout

    def forward(self, query, key, value, attention_mask, attn_mask_type=None, packed_seq_params=None):
        heads = query.shape[2]
        groups = key.shape[2]
        if heads // groups > 1:
            key = key.repeat_interleave(heads // groups, dim=2)
            value = value.repeat_interleave(heads // groups, dim=2)
        q = query.permute(1, 2, 0, 3)
        k = key.permute(1, 2, 0, 3)
        v = value.permute(1, 2, 0, 3)
        mask_type = self.attn_mask_type if attn_mask_type is None else attn_mask_type
        is_causal = mask_type == AttnMaskType.causal
        if is_causal:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if attention_mask is None else ~attention_mask)
        sq, b = query.shape[0], query.shape[1]
        return out.permute(2, 0, 1, 3).reshape(sq, b, -1)
