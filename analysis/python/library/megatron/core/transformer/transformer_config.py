# shardlens' model of megatron.core.transformer.transformer_config (not the library itself): TransformerConfig with
# the v0.5-era fields (a table by default value) and the derived defaults its __post_init__ fills in.
import torch.nn.functional as F
from _shardlens_common.tables import defaults_by_value, table_dataclass

from ..model_parallel_config import ModelParallelConfig
from ..utils import init_method_normal, scaled_init_method_normal


_DEFAULTS = defaults_by_value(
    [
        ("num_layers hidden_size num_attention_heads fp8_margin", 0),
        ("fp8_interval fp8_amax_history_len", 1),
        ("num_query_groups ffn_hidden_size kv_channels num_moe_experts window_size init_method"
         " output_layer_init_method recompute_granularity recompute_method recompute_num_layers"
         " distribute_saved_activations fp8 moe_z_loss_coeff moe_input_jitter_eps", None),
        ("add_bias_linear attention_softmax_in_fp32 fp8_wgrad clone_scatter_output_in_embedding", True),
        ("fp32_residual_connection apply_residual_connection_post_layernorm layernorm_zero_centered_gamma"
         " add_qkv_bias gated_linear_unit rotary_interleaved qk_layernorm apply_query_key_layer_scaling"
         " bias_activation_fusion masked_softmax_fusion persist_layer_norm memory_efficient_layer_norm"
         " bias_dropout_fusion apply_rope_fusion disable_parameter_transpose_cache enable_cuda_graph"
         " moe_grouped_gemm moe_token_dropping", False),
    ],
    hidden_dropout=0.1,
    attention_dropout=0.1,
    layernorm_epsilon=1e-5,
    activation_func=F.gelu,
    normalization="LayerNorm",
    init_method_std=0.02,
    fp8_amax_compute_algo="most_recent",
    moe_router_load_balancing_type="aux_loss",
    moe_router_topk=2,
    moe_aux_loss_coeff=0.0,
)


def _derive_defaults(self):
    ModelParallelConfig.__post_init__(self)
    if self.fp16 and self.bf16:
        raise ValueError(f"Only one of self.fp16: {self.fp16} and self.bf16 {self.bf16} should be True.")
    if self.num_attention_heads % self.tensor_model_parallel_size != 0:
        raise ValueError(
            f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
            f"tensor_model_parallel_size ({self.tensor_model_parallel_size})."
        )
    if self.ffn_hidden_size is None:
        self.ffn_hidden_size = 4 * self.hidden_size
    if self.kv_channels is None:
        self.kv_channels = self.hidden_size // self.num_attention_heads
    if self.num_query_groups is None:
        self.num_query_groups = self.num_attention_heads
    if self.num_query_groups % self.tensor_model_parallel_size != 0:
        raise ValueError(
            f"num_query_groups ({self.num_query_groups}) must be a multiple of "
            f"tensor_model_parallel_size ({self.tensor_model_parallel_size})."
        )
    if self.apply_query_key_layer_scaling:
        self.attention_softmax_in_fp32 = True
    if self.expert_model_parallel_size > 1 and self.num_moe_experts is None:
        raise ValueError("num_moe_experts must be non None to use expert-parallel.")
    if self.recompute_granularity is not None and self.recompute_granularity not in ("full", "selective"):
        raise ValueError(f"When using recompute_granuarlity: {self.recompute_granularity} must be 'full' or 'selective'.")
    if self.bias_activation_fusion:
        if self.activation_func not in (F.gelu, F.silu):
            raise ValueError("When bias_activation_fusion is True, activation function should be either gelu or swiglu")
    if self.init_method is None:
        self.init_method = init_method_normal(self.init_method_std)
    if self.output_layer_init_method is None:
        self.output_layer_init_method = scaled_init_method_normal(self.init_method_std, self.num_layers)


TransformerConfig = table_dataclass("TransformerConfig", (ModelParallelConfig,), _DEFAULTS, __post_init__=_derive_defaults)
