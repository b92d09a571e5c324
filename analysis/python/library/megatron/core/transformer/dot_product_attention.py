# shardlens' model of megatron.core.transformer.dot_product_attention (not the library itself): Megatron's local
# core attention on [sequence, batch, heads, head_dim] tensors.
import math

import torch

from .. import parallel_state
from ..fusions.fused_softmax import FusedScaleMaskSoftmax
from ..utils import divide
from .enums import AttnMaskType
from .module import MegatronModule
from .utils import attention_mask_func


class DotProductAttention(MegatronModule):
    """query (sq, b, np, hn), key/value (sk, b, ng, hn) -> context (sq, b, np * hn). No parameters."""

    def __init__(self, config, layer_number, attn_mask_type, attention_type, attention_dropout=None):
        super().__init__(config=config)
        self.config = config
        assert self.config.context_parallel_size == 1, "Context parallelism is only supported by TEDotProductAttention!"
        self.layer_number = max(1, layer_number)
        self.attn_mask_type = attn_mask_type
        self.attention_type = attention_type
        projection_size = self.config.kv_channels * self.config.num_attention_heads
        world_size = parallel_state.get_tensor_model_parallel_world_size()
        self.hidden_size_per_partition = divide(projection_size, world_size)
        self.hidden_size_per_attention_head = divide(projection_size, config.num_attention_heads)
        self.num_attention_heads_per_partition = divide(self.config.num_attention_heads, world_size)
        self.num_query_groups_per_partition = divide(self.config.num_query_groups, world_size)
        coeff = None
        self.norm_factor = math.sqrt(self.hidden_size_per_attention_head)
        if self.config.apply_query_key_layer_scaling:
            coeff = self.layer_number
            self.norm_factor *= coeff
        self.scale_mask_softmax = FusedScaleMaskSoftmax(
            input_in_fp16=self.config.fp16,
            input_in_bf16=self.config.bf16,
            attn_mask_type=self.attn_mask_type,
            scaled_masked_softmax_fusion=self.config.masked_softmax_fusion,
            mask_func=attention_mask_func,
            softmax_in_fp32=self.config.attention_softmax_in_fp32,
            scale=coeff,
        )
        self.attention_dropout = torch.nn.Dropout(
            self.config.attention_dropout if attention_dropout is None else attention_dropout
        )

    def forward(self, query, key, value, attention_mask, attn_mask_type=None, packed_seq_params=None):
        if self.num_attention_heads_per_partition // self.num_query_groups_per_partition > 1:
            repeats = self.num_attention_heads_per_partition // self.num_query_groups_per_partition
            key = key.repeat_interleave(repeats, dim=2)
            value = value.repeat_interleave(repeats, dim=2)
        sq, b, np_, hn = query.shape
        sk = key.shape[0]
        query = query.reshape(sq, b * np_, hn)
        key = key.reshape(sk, b * np_, hn)
        matmul_result = torch.bmm(query.transpose(0, 1), key.transpose(0, 1).transpose(1, 2)) * (1.0 / self.norm_factor)
        attention_scores = matmul_result.view(b, np_, sq, sk)
        attention_probs = self.scale_mask_softmax(attention_scores, attention_mask)
        attention_probs = self.attention_dropout(attention_probs)
        value = value.reshape(sk, b * np_, hn)
        attention_probs = attention_probs.view(b * np_, sq, sk)
        context = torch.bmm(attention_probs, value.transpose(0, 1))  # (b * np, sq, hn)
        context = context.view(b, np_, sq, hn).permute(2, 0, 1, 3).contiguous()
        return context.view(sq, b, self.hidden_size_per_partition)
