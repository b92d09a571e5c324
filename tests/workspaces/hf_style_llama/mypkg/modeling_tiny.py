# A small Hugging Face-style decoder written for shardlens' tests: it leans on the transformers core the way
# model files in transformers do (PreTrainedModel, ACT2FN, RoPE init, attention registry, caches, masks, decorators).
import torch
from torch import nn

from transformers.activations import ACT2FN
from transformers.cache_utils import DynamicCache
from transformers.generation import GenerationMixin
from transformers.integrations import use_kernel_forward_from_hub
from transformers.masking_utils import create_causal_mask
from transformers.modeling_layers import GenericForSequenceClassification, GradientCheckpointingLayer
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS, dynamic_rope_update
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel
from transformers.utils import auto_docstring, can_return_tuple, logging
from transformers.utils.deprecation import deprecate_kwarg
from transformers.utils.generic import check_model_inputs

from .configuration_tiny import TinyConfig

logger = logging.get_logger(__name__)


@use_kernel_forward_from_hub("RMSNorm")
class TinyNorm(nn.Module):
    def __init__(self, size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class TinyRotary(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.rope_type = "default" if config.rope_scaling is None else config.rope_scaling["rope_type"]
        inv_freq, self.attention_scaling = ROPE_INIT_FUNCTIONS[self.rope_type](config, None)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    @dynamic_rope_update
    def forward(self, x, position_ids):
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling


def rotate(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class TinyAttention(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = config.head_dim
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        self.scaling = self.head_dim**-0.5
        self.is_causal = True
        self.q_proj = nn.Linear(config.hidden_size, config.num_attention_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(config.num_attention_heads * self.head_dim, config.hidden_size, bias=False)

    @deprecate_kwarg("past_key_value", new_name="past_key_values", version="9.9")
    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None, **kwargs):
        batch, seq, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(batch, seq, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(batch, seq, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(batch, seq, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q = q * cos[:, None] + rotate(q) * sin[:, None]
        k = k * cos[:, None] + rotate(k) * sin[:, None]
        if past_key_values is not None:
            k, v = past_key_values.update(k, v, self.layer_idx)
        attention = ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]
        out, _ = attention(self, q, k, v, attention_mask, scaling=self.scaling)
        return self.o_proj(out.reshape(batch, seq, -1))


class TinyMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class TinyLayer(GradientCheckpointingLayer):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.self_attn = TinyAttention(config, layer_idx)
        self.mlp = TinyMLP(config)
        self.input_layernorm = TinyNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = TinyNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None):
        h = hidden_states + self.self_attn(self.input_layernorm(hidden_states), position_embeddings,
                                           attention_mask, past_key_values)
        return h + self.mlp(self.post_attention_layernorm(h))


@auto_docstring
class TinyPreTrainedModel(PreTrainedModel):
    config_class = TinyConfig
    base_model_prefix = "model"
    _supports_sdpa = True
    _no_split_modules = ["TinyLayer"]


@auto_docstring(custom_intro="The bare tiny decoder.")
class TinyModel(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([TinyLayer(config, i) for i in range(config.num_hidden_layers)])
        self.norm = TinyNorm(config.hidden_size, config.rms_norm_eps)
        self.rotary_emb = TinyRotary(config)
        self.post_init()

    @check_model_inputs
    @auto_docstring
    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, use_cache=None):
        hidden_states = self.embed_tokens(input_ids)
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        cache_position = torch.arange(hidden_states.shape[1])
        if position_ids is None:
            position_ids = cache_position.unsqueeze(0)
        mask = create_causal_mask(config=self.config, input_embeds=hidden_states, attention_mask=attention_mask,
                                  cache_position=cache_position, past_key_values=past_key_values)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings, mask, past_key_values)
        return BaseModelOutputWithPast(last_hidden_state=self.norm(hidden_states), past_key_values=past_key_values)


class TinyForCausalLM(TinyPreTrainedModel, GenerationMixin):
    _tied_weights_keys = ["lm_head.weight"]

    def __init__(self, config):
        super().__init__(config)
        self.model = TinyModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    @can_return_tuple
    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        outputs = self.model(input_ids, attention_mask=attention_mask, **kwargs)
        return CausalLMOutputWithPast(logits=self.lm_head(outputs.last_hidden_state))


class TinyForSequenceClassification(GenericForSequenceClassification, TinyPreTrainedModel):
    pass
