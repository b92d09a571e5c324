# A GPT-2-style model written for shardlens' tests: Conv1D projections, an additive mask from the model's helpers,
# and an LM head tied to the token embedding by post_init().
import torch
from torch import nn

from ...activations import ACT2FN
from ...generation import GenerationMixin
from ...modeling_outputs import BaseModelOutputWithPastAndCrossAttentions, CausalLMOutputWithCrossAttentions
from ...modeling_utils import PreTrainedModel
from ...pytorch_utils import Conv1D
from .configuration_tiny_gpt import TinyGPTConfig


class TinyGPTBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        inner = config.n_inner if config.n_inner is not None else 4 * config.hidden_size
        self.n_head = config.n_head
        self.ln_1 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.c_attn = Conv1D(3 * config.hidden_size, config.hidden_size)
        self.c_proj = Conv1D(config.hidden_size, config.hidden_size)
        self.ln_2 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.c_fc = Conv1D(inner, config.hidden_size)
        self.mlp_proj = Conv1D(config.hidden_size, inner)
        self.act = ACT2FN[config.activation_function]

    def forward(self, x, mask):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q = q.view(b, t, self.n_head, -1).transpose(1, 2)
        k = k.view(b, t, self.n_head, -1).transpose(1, 2)
        v = v.view(b, t, self.n_head, -1).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5) + mask
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(self.act(self.c_fc(self.ln_2(x))))


class TinyGPTPreTrainedModel(PreTrainedModel):
    config_class = TinyGPTConfig
    base_model_prefix = "transformer"


class TinyGPTModel(TinyGPTPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.wte = nn.Embedding(config.vocab_size, config.hidden_size)
        self.wpe = nn.Embedding(config.n_positions, config.hidden_size)
        self.h = nn.ModuleList([TinyGPTBlock(config) for _ in range(config.num_hidden_layers)])
        self.ln_f = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.post_init()

    def get_input_embeddings(self):
        return self.wte

    def forward(self, input_ids, attention_mask=None):
        b, t = input_ids.shape
        x = self.wte(input_ids) + self.wpe(torch.arange(t))
        if attention_mask is None:
            attention_mask = torch.ones(b, t)
        mask = self.get_extended_attention_mask(attention_mask, (b, t))
        for block in self.h:
            x = block(x, mask)
        return BaseModelOutputWithPastAndCrossAttentions(last_hidden_state=self.ln_f(x))


class TinyGPTForCausalLM(TinyGPTPreTrainedModel, GenerationMixin):
    _tied_weights_keys = ["lm_head.weight"]

    def __init__(self, config):
        super().__init__(config)
        self.transformer = TinyGPTModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def get_output_embeddings(self):
        return self.lm_head

    def forward(self, input_ids, attention_mask=None):
        hidden = self.transformer(input_ids, attention_mask).last_hidden_state
        return CausalLMOutputWithCrossAttentions(logits=self.lm_head(hidden))
