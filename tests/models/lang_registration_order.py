# Perceiver-IO-style encoder/decoder where what torch lists, and in what
# order, depends on attribute-assignment semantics: `self.x = None` first
# and a module later (registered at the later point), reassigning an
# existing submodule (keeps its original slot), assigning None to a
# registered submodule (slot kept, skipped by named_modules), `del self.x`
# (removed; a later re-add goes to the end), Parameters assigned after
# submodules (own parameters are listed first), a plain int attribute later
# replaced by a module, a class attribute shadowed by an instance attribute
# (and a class-level nn.Module that is NOT registered), and a `global`
# counter giving each layer an id used in a buffer shape.
import math

import torch
import torch.nn as nn

_LAYER_COUNTER = 0


def next_layer_id():
    global _LAYER_COUNTER
    _LAYER_COUNTER += 1
    return _LAYER_COUNTER


class CrossAttention(nn.Module):
    num_heads = 1
    use_query_residual = True
    shared_act = nn.GELU()   # class attribute: not a registered submodule

    def __init__(self, q_dim, kv_dim, qk_channels=None, v_channels=None, num_heads=None, widening=1):
        super().__init__()
        if num_heads is not None:
            self.num_heads = num_heads      # shadows the class attribute
        qk_channels = qk_channels or q_dim
        v_channels = v_channels or qk_channels
        self.layer_id = next_layer_id()
        self.layernorm1 = nn.LayerNorm(q_dim)
        self.layernorm2 = nn.LayerNorm(kv_dim) if kv_dim != q_dim else None
        self.query = nn.Linear(q_dim, qk_channels)
        self.key = nn.Linear(kv_dim, qk_channels)
        self.value = nn.Linear(kv_dim, v_channels)
        self.dense = None
        self.dropout = nn.Dropout(0.1)
        self.layernorm3 = nn.LayerNorm(q_dim)
        self.mlp = nn.Sequential(nn.Linear(q_dim, q_dim * widening), nn.GELU(), nn.Linear(q_dim * widening, q_dim))
        # assigned after everything above: now registered at the end
        self.dense = nn.Linear(v_channels, q_dim)
        # reassigning an existing submodule keeps its original position
        self.query = nn.Linear(q_dim, qk_channels, bias=False)
        self.register_buffer("layer_tag", torch.zeros(self.layer_id))
        self.head_scale = nn.Parameter(torch.ones(self.num_heads))


class PerceiverIO(nn.Module):
    num_heads = 8

    def __init__(self, input_dim=261, d_latents=1280, num_latents=256, num_blocks=1, num_self_attends=26,
                 d_out=768, num_outputs=2048, drop_decoder=False):
        super().__init__()
        self.decoder = 0   # plain attribute for now
        self.latents = nn.Parameter(torch.randn(num_latents, d_latents))
        self.input_preprocessor = nn.Linear(input_dim, input_dim)
        self.cross_attention = CrossAttention(d_latents, input_dim, num_heads=1, widening=1)
        self.self_attends = nn.ModuleList(
            CrossAttention(d_latents, d_latents, num_heads=self.num_heads, widening=1) for _ in range(num_self_attends))
        self.num_heads = 16   # instance attribute; CrossAttention below still sees 16 via self
        self.decoder = CrossAttention(d_out, d_latents, qk_channels=256, v_channels=d_out, num_heads=self.num_heads)
        self.output_queries = nn.Parameter(torch.randn(num_outputs, d_out))
        self.postprocessor = nn.Linear(d_out, 262)
        self.scratch = nn.Linear(4, 4)
        del self.scratch
        self.input_preprocessor = None    # slot kept, module dropped
        if drop_decoder:
            del self.decoder
        self.final_norm = nn.LayerNorm(d_out)
        self.scratch = nn.Identity()      # re-added: goes to the end now
        self.register_buffer("num_layers", torch.tensor(_LAYER_COUNTER))
        self.embedding_decoder_bias = nn.Parameter(torch.zeros(262))


model = PerceiverIO()
