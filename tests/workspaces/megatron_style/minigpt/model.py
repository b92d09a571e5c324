# A small GPT written for shardlens' tests on Megatron-Core's building blocks: TransformerConfig, layer specs built
# with build_module, tensor-parallel linears and embedding (full logical shapes), fused norms, bias-dropout-add.
from dataclasses import dataclass
from typing import Union

import torch

from megatron.core import parallel_state, tensor_parallel
from megatron.core.fusions.fused_bias_dropout import get_bias_dropout_add
from megatron.core.fusions.fused_layer_norm import FusedLayerNorm
from megatron.core.transformer.custom_layers.transformer_engine import TENorm
from megatron.core.transformer.identity_op import IdentityOp
from megatron.core.transformer.module import MegatronModule
from megatron.core.transformer.spec_utils import ModuleSpec, build_module
from megatron.core.transformer.transformer_config import TransformerConfig
from megatron.core.utils import divide


@dataclass
class BlockSubmodules:
    norm: Union[ModuleSpec, type] = IdentityOp
    qkv: Union[ModuleSpec, type] = IdentityOp
    proj: Union[ModuleSpec, type] = IdentityOp
    fc1: Union[ModuleSpec, type] = IdentityOp
    fc2: Union[ModuleSpec, type] = IdentityOp
    bda: Union[ModuleSpec, type] = IdentityOp


class Block(MegatronModule):
    def __init__(self, config, submodules, layer_number=1):
        super().__init__(config=config)
        world = parallel_state.get_tensor_model_parallel_world_size()
        self.heads = divide(config.num_attention_heads, world)
        self.input_norm = build_module(submodules.norm, config=config, hidden_size=config.hidden_size,
                                       eps=config.layernorm_epsilon)
        self.qkv = build_module(submodules.qkv, config.hidden_size, 3 * config.hidden_size, config=config,
                                init_method=config.init_method, bias=config.add_bias_linear, gather_output=False)
        self.proj = build_module(submodules.proj, config.hidden_size, config.hidden_size, config=config,
                                 init_method=config.output_layer_init_method, bias=config.add_bias_linear,
                                 input_is_parallel=True, skip_bias_add=True)
        self.mlp_norm = build_module(submodules.norm, config=config, hidden_size=config.hidden_size,
                                     eps=config.layernorm_epsilon)
        ffn = config.ffn_hidden_size * (2 if config.gated_linear_unit else 1)
        self.fc1 = build_module(submodules.fc1, config.hidden_size, ffn, config=config, init_method=config.init_method,
                                bias=config.add_bias_linear, gather_output=False)
        self.fc2 = build_module(submodules.fc2, config.ffn_hidden_size, config.hidden_size, config=config,
                                init_method=config.output_layer_init_method, bias=config.add_bias_linear,
                                input_is_parallel=True, skip_bias_add=True)
        self.bda = build_module(submodules.bda)

    def forward(self, x):
        s, b, h = x.shape
        qkv, _ = self.qkv(self.input_norm(x))
        q, k, v = qkv.view(s, b, self.heads, -1).chunk(3, dim=-1)
        scores = torch.einsum("sbhd,tbhd->bhst", q, k) / q.shape[-1] ** 0.5
        ctx = torch.einsum("bhst,tbhd->sbhd", scores.softmax(-1), v).reshape(s, b, h)
        x = self.bda(self.training, False)(self.proj(ctx), x, 0.0)
        hidden, _ = self.fc1(self.mlp_norm(x))
        if self.config.gated_linear_unit:
            a, g = hidden.chunk(2, dim=-1)
            hidden = self.config.activation_func(a) * g
        else:
            hidden = self.config.activation_func(hidden)
        return self.bda(self.training, False)(self.fc2(hidden), x, 0.0)


def local_block_spec():
    return ModuleSpec(module=Block, submodules=BlockSubmodules(norm=FusedLayerNorm,
                                                               qkv=tensor_parallel.ColumnParallelLinear,
                                                               proj=tensor_parallel.RowParallelLinear,
                                                               fc1=tensor_parallel.ColumnParallelLinear,
                                                               fc2=tensor_parallel.RowParallelLinear,
                                                               bda=get_bias_dropout_add))


class MiniGPT(MegatronModule):
    def __init__(self, config, spec, vocab_size, max_sequence_length):
        super().__init__(config=config)
        self.word_embeddings = tensor_parallel.VocabParallelEmbedding(vocab_size, config.hidden_size,
                                                                      init_method=config.init_method, config=config)
        self.position_embeddings = torch.nn.Embedding(max_sequence_length, config.hidden_size)
        self.layers = torch.nn.ModuleList([build_module(spec, config=config, layer_number=i + 1)
                                           for i in range(config.num_layers)])
        self.final_norm = TENorm(config=config, hidden_size=config.hidden_size, eps=config.layernorm_epsilon)
        self.output_layer = tensor_parallel.ColumnParallelLinear(config.hidden_size, vocab_size, config=config,
                                                                 init_method=config.init_method, bias=False)

    def forward(self, input_ids, position_ids):
        x = (self.word_embeddings(input_ids) + self.position_embeddings(position_ids)).transpose(0, 1)
        for layer in self.layers:
            x = layer(x)
        logits, _ = self.output_layer(self.final_norm(x))
        return logits.transpose(0, 1)
